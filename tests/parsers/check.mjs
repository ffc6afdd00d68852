// Checks Mermaid diagrams with the real Mermaid parser, the one GitHub runs:
// each file must parse as a sequenceDiagram, and every message and note must
// keep its whole text (Mermaid cuts a text at a raw `#` or `;` without an
// error, so parsing alone would not see it). Before the given files it checks
// two deliberately broken diagrams and fails if it does not catch them.
//
//   node check.mjs FILE.mmd...      exit 0: all good; 1: a diagram is broken
import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });

// idemsim's entity codes (#35; and the like) and Mermaid's placeholders for them.
const ours = (s) => s.replace(/#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));
const theirs = (s) =>
  s.replace(/ﬂ°°(\d+)¶ß/g, (_, n) => String.fromCharCode(Number(n)))
   .replace(/ﬂ°(\w+)¶ß/g, (_, n) => `&${n};`);

// The text of each message and note line, as idemsim meant it.
function expectedTexts(text) {
  const out = [];
  for (const line of text.split('\n').slice(1)) {
    const t = line.trim();
    if (t === '' || t.startsWith('%%') || t.startsWith('participant ')) continue;
    if (t.startsWith('title ')) { out.title = t.slice(6).trim(); continue; }
    const m = t.match(/^(Note over [^:]+|[^:]+?(?:->>|-x)[^:]+?):(.*)$/);
    if (!m) return { error: `a line that is neither a message nor a note: ${t}` };
    out.push(ours(m[2]).trim());
  }
  return { texts: out };
}

async function check(name, text) {
  try {
    await mermaid.parse(text);
  } catch (e) {
    return `${name}: Mermaid cannot parse it: ${String(e.message || e).split('\n').slice(0, 4).join(' | ')}`;
  }
  const want = expectedTexts(text);
  if (want.error) return `${name}: ${want.error}`;
  const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
  // `shrink --all` titles each diagram with its scenario: Mermaid must read it whole.
  const title = want.texts.title;
  if (title !== undefined && diagram.db.getDiagramTitle() !== title) {
    return `${name}: title "${title}" written, Mermaid read "${diagram.db.getDiagramTitle()}"`;
  }
  const got = diagram.db.getMessages().map((m) => theirs(String(m.message ?? '')).trim());
  if (got.length !== want.texts.length) {
    return `${name}: ${want.texts.length} messages and notes written, Mermaid read ${got.length}`;
  }
  for (let i = 0; i < got.length; i++) {
    if (got[i] !== want.texts[i]) {
      return `${name}: text ${i + 1} reads "${got[i]}" in Mermaid, but idemsim wrote "${want.texts[i]}"`;
    }
  }
  return null;
}

const broken = {
  'broken: a raw # in a note':
    'sequenceDiagram\n    participant a\n    participant b\n    a->>b: hi\n    Note over a,b: … 9 more times, #7 to #24 …\n',
  'broken: a raw ; in a message':
    'sequenceDiagram\n    participant a\n    participant b\n    a->>b: paid; effects\n',
  'broken: not a statement': 'sequenceDiagram\n    participant a\n    a->>b hi\n',
};
let failed = 0;
for (const [name, text] of Object.entries(broken)) {
  if ((await check(name, text)) === null) {
    console.error(`check.mjs does not catch a broken diagram (${name}): the check is void`);
    failed++;
  }
}
const files = process.argv.slice(2);
for (const file of files) {
  const problem = await check(file, readFileSync(file, 'utf8'));
  if (problem) {
    console.error(problem);
    failed++;
  }
}
console.log(`${files.length} diagrams checked, ${failed} problems`);
process.exit(failed === 0 ? 0 : 1);
