// Drives headless Chromium over the DevTools protocol for the HTML report
// tests (tests/html.rs), with nothing but Node's built-ins: Chromium is
// started with --remote-debugging-pipe, reads commands on fd 3 and writes
// answers on fd 4, each message a JSON text ended by a NUL byte.
//
// Usage: node cdp.mjs PLAN.json, where the plan is
//   { "url": "file:///...", "width": 1400, "height": 1000,
//     "steps": [ {"eval": "js expression"}, {"key": "ArrowRight"},
//                {"click": "css selector"}, {"click": "a link", "navigates": true}, {"screenshot": "/path.png", "full": true} ] }
// It prints one JSON object: { "results": [value of each eval, in order],
// "errors": [console errors, uncaught exceptions, failed or network loads] }.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const browser = process.env.IDEMSIM_CHROMIUM || 'chromium';
const profile = mkdtempSync(join(tmpdir(), 'idemsim-chromium-'));
const width = plan.width || 1400;
const height = plan.height || 1000;
const proc = spawn(browser, [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  `--user-data-dir=${profile}`, '--remote-debugging-pipe', `--window-size=${width},${height}`,
  '--hide-scrollbars', 'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });

let stderr = '';
proc.stderr.on('data', (d) => { stderr += d; });
const toBrowser = proc.stdio[3];
const fromBrowser = proc.stdio[4];

const errors = [];
const results = [];
const pending = new Map();
const waiters = [];
let nextId = 1;
let buffer = Buffer.alloc(0);

function finish(code) {
  try { proc.kill('SIGKILL'); } catch (e) { /* already gone */ }
  try { rmSync(profile, { recursive: true, force: true }); } catch (e) { /* best effort */ }
  process.stdout.write(JSON.stringify({ results, errors }) + '\n', () => process.exit(code));
}

const timer = setTimeout(() => {
  errors.push('timeout: the browser did not finish the plan in 90 s; its stderr: ' + stderr.slice(-2000));
  finish(1);
}, 90000);

proc.on('exit', (code) => {
  if (pending.size > 0) {
    errors.push(`the browser exited (${code}) with commands unanswered; its stderr: ` + stderr.slice(-2000));
    clearTimeout(timer);
    finish(1);
  }
});
proc.on('error', (e) => {
  errors.push('cannot start ' + browser + ': ' + e.message);
  clearTimeout(timer);
  finish(1);
});

fromBrowser.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  let end;
  while ((end = buffer.indexOf(0)) >= 0) {
    const msg = JSON.parse(buffer.subarray(0, end).toString('utf8'));
    buffer = buffer.subarray(end + 1);
    if (msg.id !== undefined && pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) reject(new Error(JSON.stringify(msg.error))); else resolve(msg.result);
    } else if (msg.method) {
      event(msg);
    }
  }
});

function send(method, params = {}, sessionId) {
  const id = nextId++;
  const msg = { id, method, params };
  if (sessionId) msg.sessionId = sessionId;
  toBrowser.write(JSON.stringify(msg) + '\0');
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

function event(msg) {
  const p = msg.params || {};
  if (msg.method === 'Runtime.consoleAPICalled' && (p.type === 'error' || p.type === 'assert')) {
    errors.push('console.' + p.type + ': ' + p.args.map((a) => a.value ?? a.description).join(' '));
  } else if (msg.method === 'Runtime.exceptionThrown') {
    const d = p.exceptionDetails;
    errors.push('uncaught: ' + (d.exception && d.exception.description || d.text) + ' at line ' + d.lineNumber);
  } else if (msg.method === 'Log.entryAdded' && p.entry.level === 'error') {
    errors.push('log: ' + p.entry.text + (p.entry.url ? ' (' + p.entry.url + ')' : ''));
  } else if (msg.method === 'Network.requestWillBeSent') {
    const url = p.request.url;
    if (!/^(file|data|blob|about):/.test(url)) errors.push('network request: ' + url);
  }
  for (const w of waiters.splice(0)) {
    if (w.method === msg.method) w.resolve(p); else waiters.push(w);
  }
}

function waitFor(method) {
  return new Promise((resolve) => waiters.push({ method, resolve }));
}

async function main() {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  const s = (method, params) => send(method, params, sessionId);
  await s('Runtime.enable');
  await s('Log.enable');
  await s('Page.enable');
  await s('Network.enable');
  await s('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
  const loaded = waitFor('Page.loadEventFired');
  await s('Page.navigate', { url: plan.url });
  await loaded;
  const settle = () => s('Runtime.evaluate', {
    expression: 'new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))',
    awaitPromise: true,
  });
  await settle();
  for (const step of plan.steps || []) {
    if (step.eval !== undefined) {
      const r = await s('Runtime.evaluate', { expression: step.eval, returnByValue: true, awaitPromise: true });
      if (r.exceptionDetails) {
        errors.push('eval failed: ' + step.eval + ': ' + (r.exceptionDetails.exception && r.exceptionDetails.exception.description));
        results.push(null);
      } else {
        results.push(r.result.value === undefined ? null : r.result.value);
      }
    } else if (step.key !== undefined) {
      const codes = { ArrowRight: 39, ArrowLeft: 37, ArrowDown: 40, ArrowUp: 38, Home: 36, End: 35, Enter: 13 };
      for (const type of ['rawKeyDown', 'keyUp']) {
        await s('Input.dispatchKeyEvent', { type, key: step.key, code: step.key, windowsVirtualKeyCode: codes[step.key] || 0 });
      }
      await settle();
    } else if (step.click !== undefined) {
      // Scroll first and let the page settle (its own scrolling, layout)
      // before reading where the element is: a position read in the same
      // frame as the scroll can be stale by the time the mouse arrives.
      const sel = JSON.stringify(step.click);
      await s('Runtime.evaluate', {
        expression: `(() => { const e = document.querySelector(${sel}); if (e) e.scrollIntoView({ block: 'center', inline: 'nearest' }); })()`,
      });
      await settle();
      const r = await s('Runtime.evaluate', {
        expression: `(() => { const e = document.querySelector(${sel}); if (!e) return null;
          const b = e.getBoundingClientRect(); return [b.left + Math.min(b.width / 2, 40), b.top + b.height / 2]; })()`,
        returnByValue: true,
      });
      const at = r.result.value;
      if (!at) {
        errors.push('click: nothing matches ' + step.click);
        continue;
      }
      // A click that opens another page ({"click": sel, "navigates": true})
      // waits for that page's load before the next step runs in it.
      const navigated = step.navigates ? waitFor('Page.loadEventFired') : null;
      for (const type of ['mousePressed', 'mouseReleased']) {
        await s('Input.dispatchMouseEvent', { type, x: at[0], y: at[1], button: 'left', clickCount: 1 });
      }
      if (navigated) await navigated;
      await settle();
    } else if (step.screenshot !== undefined) {
      const r = await s('Page.captureScreenshot', { format: 'png', captureBeyondViewport: !!step.full });
      writeFileSync(step.screenshot, Buffer.from(r.data, 'base64'));
    }
  }
  await send('Browser.close').catch(() => {});
}

main().then(() => { clearTimeout(timer); finish(0); }, (e) => {
  errors.push('driver: ' + e.message + '; the browser said: ' + stderr.slice(-2000));
  clearTimeout(timer);
  finish(1);
});
