// idemsim's run report: draws the sequence diagram from the embedded data,
// steps through it and rebuilds every actor's state at the selected step.
// No library, no network: the page works from a file:// URL.
(function () {
  'use strict';
  const D = JSON.parse(document.getElementById('data').textContent);
  // Texts that differ only in their numbers share a template (html.rs `Strings`).
  const S = D.S.map((e) => {
    if (typeof e === 'string') return e;
    const t = D.T[e[0]];
    let out = '';
    for (let i = 0; i < t.length; i++) out += t[i] + (i + 1 < e.length ? e[i + 1] : '');
    return out;
  });
  const A = D.actors;
  const NS = 'http://www.w3.org/2000/svg';
  const ROW = 22;
  // A wrapped line below a row's first; a character of 12 px text at most.
  const LINE = 15;
  const CHAR = 6.9;
  const PAD = 16;
  const K = { MIX: 0, START: 1, RESTART: 2, CRASH: 3, SEND: 4, DROP: 5, DELIVER: 6, TIMER_SET: 7,
    TIMER: 8, EFFECT: 9, ATTEMPT: 10, OBSERVE: 11, SITUATION: 12, HEALING: 13 };
  const KIND = ['mix', 'start', 'restart', 'crash', 'send', 'drop', 'deliver', 'timer_set',
    'timer_fired', 'effect', 'attempt', 'observe', 'situation', 'healing'];

  // ------------------------------------------------------------ the rows
  const items = [];
  {
    let step = 0, t = 0;
    for (const r of D.items) {
      step += r[1];
      t += r[2];
      items.push({ k: r[0], step: step, t: t, a: r[3], x: r.slice(4) });
    }
    // Deliveries leave out what they can: [msg, back, dup, note, from]
    // become whole here, with the sender read off the send row.
    items.forEach((it, i) => {
      if (it.k !== K.DELIVER) return;
      const [msg, back, dup, note, from] = it.x;
      it.x = [back > 0 ? items[i - back].a : from, msg, dup || 0, note === undefined ? -1 : note, back];
    });
  }
  const lastStep = items.length ? items[items.length - 1].step : 0;
  const violating = new Set(D.end.effects);
  const turnItem = D.end.turn === undefined ? null : D.end.turn;

  // Virtual time as the text trace prints it.
  function time(us) {
    const s = Math.floor(us / 1e6);
    const ms = String(Math.floor((us % 1e6) / 1000)).padStart(3, '0');
    const p2 = (n) => String(n).padStart(2, '0');
    if (s >= 86400) {
      return Math.floor(s / 86400) + 'd ' + p2(Math.floor((s % 86400) / 3600)) + ':' +
        p2(Math.floor((s % 3600) / 60)) + ':' + p2(s % 60) + '.' + ms;
    }
    if (s >= 3600) {
      return p2(Math.floor(s / 3600)) + ':' + p2(Math.floor((s % 3600) / 60)) + ':' + p2(s % 60) + '.' + ms;
    }
    return s + '.' + ms + ' s';
  }

  // One line per row, in the words of the text trace (render/items.rs `describe`).
  function describe(it) {
    const x = it.x;
    switch (it.k) {
      case K.MIX: return S[x[0]];
      case K.START: return 'start';
      case K.RESTART: return 'restart: state rebuilt from storage';
      case K.CRASH: return 'CRASH: volatile state lost, storage kept';
      case K.SEND: return '→ ' + A[x[0]] + '  ' + S[x[1]] + (x[2] ? '  (the network duplicates it)' : '');
      case K.DROP: return '→ ' + A[x[0]] + '  ✗ ' + S[x[2]] + ': ' + S[x[1]];
      case K.DELIVER: return '← ' + A[x[0]] + '  ' + S[x[1]] + (x[2] ? '  (network duplicate)' : '') +
        (x[3] >= 0 ? '  ← ' + S[x[3]] : '');
      case K.TIMER_SET: return 'timer set: ' + S[x[0]] + ' at ' + time(x[1]);
      case K.TIMER: return 'timer: ' + S[x[0]];
      case K.EFFECT: return '• EFFECT ' + S[x[0]] + ' of ' + S[x[2]] + '  ← ' + S[x[0]] + ' #' + x[3] + ' for ' + S[x[1]];
      case K.ATTEMPT: return '• attempt ' + x[1] + ' for ' + S[x[0]] + ': ' + S[x[2]];
      case K.OBSERVE: return '• ' + S[x[0]];
      case K.SITUATION: return '◦ situation: ' + S[x[0]];
      case K.HEALING: return '── healing phase: faults stop, crashed actors restart ──';
    }
    return '';
  }

  // Rows on screen: items, closed folds (one row each) and the ending.
  const folds = D.folds.map((f) => ({ from: f[0], to: f[1], repeats: f[2], period: f[3], a: f[4], b: f[5], open: false }));
  let rows = [];
  let rowOf = new Int32Array(items.length);
  let stops = [];
  function layout() {
    rows = [];
    let fi = 0;
    for (let i = 0; i < items.length;) {
      const f = folds[fi];
      if (f && i === f.from) {
        fi++;
        if (!f.open) {
          const r = rows.length;
          rows.push({ fold: f });
          for (let j = f.from; j < f.to; j++) rowOf[j] = r;
          i = f.to;
          continue;
        }
      }
      rowOf[i] = rows.length;
      rows.push({ item: i });
      i++;
    }
    rows.push({ end: true });
    // Stops for stepping: each engine step, each closed fold, the ending.
    stops = [];
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r];
      const prev = stops[stops.length - 1];
      if (row.item !== undefined) {
        const step = items[row.item].step;
        if (prev && prev.item && prev.step === step) {
          prev.last = r;
        } else {
          stops.push({ item: true, step: step, first: r, last: r });
        }
      } else if (row.fold) {
        stops.push({ fold: row.fold, step: row.fold.b, first: r, last: r });
      } else {
        stops.push({ end: true, step: Infinity, first: r, last: r });
      }
      row.stop = stops.length - 1;
    }
  }

  // ------------------------------------------------------------ the state
  // Steps are deltas in the data; absolute from here on.
  const changes = [];
  {
    let step = 0;
    for (const c of D.changes) {
      step += c[0];
      changes.push([step, c[1], c[2], c[3]]);
    }
  }
  const CHECK_EVERY = 256;
  const checkpoints = [];
  function emptyState() {
    return A.map(() => ({ state: null, storage: [], started: false }));
  }
  function copy(st) {
    return st.map((s) => ({ state: s.state && s.state.slice(), storage: s.storage.slice(), started: s.started }));
  }
  function applyDelta(lines, d) {
    if (d === 0) return lines;
    if (d === 1) return null;
    const out = lines ? lines.slice() : [];
    out.splice(d[0], d[1], ...d.slice(2));
    return out;
  }
  function applyChange(st, c) {
    const s = st[c[1]];
    s.started = true;
    if (c[2] !== 0) s.state = applyDelta(s.state, c[2]);
    if (c[3] !== 0) s.storage = applyDelta(s.storage, c[3]);
  }
  {
    let st = emptyState();
    for (let i = 0; i < changes.length; i++) {
      if (i % CHECK_EVERY === 0) checkpoints.push(copy(st));
      applyChange(st, changes[i]);
    }
  }
  // The first change after `step`.
  function changesUpTo(step) {
    let lo = 0, hi = changes.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (changes[mid][0] <= step) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  let cur = { n: 0, st: emptyState() };
  function stateAt(step) {
    const n = changesUpTo(step);
    if (n < cur.n || n - cur.n > CHECK_EVERY) {
      const c = Math.floor(n / CHECK_EVERY);
      cur = { n: c * CHECK_EVERY, st: copy(checkpoints[c] || emptyState()) };
    }
    while (cur.n < n) applyChange(cur.st, changes[cur.n++]);
    return cur.st;
  }
  // Lines the changes of `step` wrote, per actor and part.
  function changedAt(step) {
    const out = {};
    for (let i = changesUpTo(step - 1); i < changes.length && changes[i][0] === step; i++) {
      const c = changes[i];
      const o = out[c[1]] || (out[c[1]] = { state: new Set(), storage: new Set(), down: false });
      for (const [part, d] of [['state', c[2]], ['storage', c[3]]]) {
        if (d === 1) o.down = true;
        else if (d !== 0) for (let j = 0; j < d.length - 2; j++) o[part].add(d[0] + j);
      }
    }
    return out;
  }

  // ------------------------------------------------------------ drawing
  const svg = document.getElementById('diagram');
  const scroller = document.getElementById('scroller');
  const head = document.getElementById('lane-head');
  const actorW = Math.max(...A.map((a) => a.length), 5) * 7.4 + 12;
  const TURN_TAG = '  ◀ point of no return';
  // The columns fit the pane: the lanes take about a third of it (between
  // 56 and 104 px each), the text column the rest, and a text wraps rather
  // than widen the page; only a pane too narrow for 28 characters of text
  // scrolls, inside itself (geometry() on every layout and resize).
  let LANE = 104, textX = 0, descX = 0, WIDTH = 0, charsPerLine = 60;
  function geometry() {
    const avail = Math.max(scroller.clientWidth || 0, 360);
    LANE = Math.max(56, Math.min(104, Math.floor((avail * 0.32) / A.length)));
    textX = PAD + A.length * LANE + 8;
    descX = textX + 120 + actorW;
    WIDTH = Math.max(avail, descX + 28 * CHAR + 8);
    charsPerLine = Math.floor((WIDTH - descX - 8) / CHAR);
  }
  const laneX = (a) => PAD + a * LANE + LANE / 2;
  // Rows differ in height by their wrapped lines: tops[r] is row r's top.
  let tops = [0];
  let wrapped = [];
  const rowTop = (r) => tops[r];
  const rowH = (r) => tops[r + 1] - tops[r];
  const rowY = (r) => tops[r] + ROW / 2;
  // The row at height y, by bisection.
  function rowAt(y) {
    let lo = 0, hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (tops[mid + 1] <= y) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // Lines of at most n characters, broken after a space where one is near;
  // joined they give the text back whole (a test reads a row's text).
  function wrap(text, n) {
    const out = [];
    let rest = text;
    n = Math.max(n, 12);
    while (rest.length > n) {
      let cut = rest.lastIndexOf(' ', n);
      if (cut < n / 3) cut = n; else cut += 1;
      out.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    }
    out.push(rest);
    return out;
  }

  // Each row's lines of text, and from them the rows' tops.
  function measure() {
    wrapped = new Array(rows.length);
    tops = new Array(rows.length + 1);
    tops[0] = 0;
    const endChars = Math.floor((WIDTH - 16) / 7.6);
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r];
      let lines;
      if (row.item !== undefined) {
        lines = wrap(describe(items[row.item]), charsPerLine - (row.item === turnItem ? TURN_TAG.length : 0));
      } else if (row.fold) {
        lines = wrap(foldText(row.fold), charsPerLine);
      } else {
        lines = wrap(endText(), endChars);
      }
      wrapped[r] = lines;
      tops[r + 1] = tops[r] + ROW + (lines.length - 1) * LINE;
    }
  }

  function foldText(f) {
    return '⋮ … ' + f.repeats + ' more times the ' + f.period + ' step(s) above, #' + f.a + ' to #' + f.b + ' …  (click to unfold)';
  }

  function endText() {
    const e = D.end;
    const what = e.invariant ? 'violation of ' + e.invariant + (e.operation ? ' on ' + e.operation : '') : e.verdict;
    return '=> ' + what + ': ' + e.message;
  }

  // A text element of several lines, one tspan each.
  function textLines(attrs, lines) {
    const t = el('text', attrs);
    lines.forEach((l, i) => t.appendChild(el('tspan', i ? { x: attrs.x, dy: LINE } : {}, l)));
    return t;
  }

  function el(name, attrs, text) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function drawHead() {
    const h = el('svg', { width: WIDTH, height: 28, id: 'actors' });
    A.forEach((a, i) => {
      h.appendChild(el('rect', { x: PAD + i * LANE + 3, y: 3, width: LANE - 6, height: 22, rx: 4, fill: '#eef3f8', stroke: '#9aa4ae' }));
      const name = el('text', { x: laneX(i), y: 18, class: 'actor-name', 'data-actor': a }, a);
      // A name wider than its narrowed lane is drawn narrower, never cut.
      if (a.length * 7.6 > LANE - 10) {
        name.setAttribute('textLength', LANE - 10);
        name.setAttribute('lengthAdjust', 'spacingAndGlyphs');
      }
      h.appendChild(name);
    });
    h.appendChild(el('text', { x: textX, y: 18, class: 'meta' }, 'step'));
    h.appendChild(el('text', { x: textX + 112, y: 18, class: 'meta', 'text-anchor': 'end' }, 'time'));
    h.appendChild(el('text', { x: textX + 120, y: 18, class: 'meta' }, 'actor'));
    h.appendChild(el('text', { x: descX, y: 18, class: 'meta' }, 'what happened'));
    head.replaceChildren(h);
    head.scrollLeft = scroller.scrollLeft;
  }
  scroller.addEventListener('scroll', () => { head.scrollLeft = scroller.scrollLeft; });

  // Where each actor is down, in rows: from its crash to its restart.
  function downSpans() {
    const spans = [];
    const from = new Array(A.length).fill(-1);
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r];
      if (row.item === undefined) continue;
      const it = items[row.item];
      if (it.k === K.CRASH) from[it.a] = r;
      if (it.k === K.RESTART && from[it.a] >= 0) { spans.push([it.a, from[it.a], r]); from[it.a] = -1; }
    }
    from.forEach((r, a) => { if (r >= 0) spans.push([a, r, rows.length - 1]); });
    return spans;
  }

  // Arrows: [from row, to row, from actor, to actor, class, item].
  function arrows() {
    const out = [];
    for (let i = 0; i < items.length; i++) {
      const it = items[i];
      if (it.k === K.DELIVER && it.x[4] > 0) {
        out.push([rowOf[i - it.x[4]], rowOf[i], items[i - it.x[4]].a, it.a, it.x[2] ? 'arrow dup' : 'arrow', i]);
      } else if (it.k === K.DROP && it.x[3] > 0) {
        out.push([rowOf[i - it.x[3]], rowOf[i], it.a, it.x[0], 'arrow to-down', i]);
      }
    }
    return out;
  }

  let allArrows = [];
  let spans = [];
  let drawn = null;
  let selected = 0;

  function glyph(g, it, r, i) {
    const x = laneX(it.a), y = rowY(r);
    switch (it.k) {
      case K.START: g.appendChild(el('rect', { x: x - 4, y: y - 4, width: 8, height: 8, class: 'glyph-dot' })); break;
      case K.RESTART:
        g.appendChild(el('circle', { cx: x, cy: y, r: 6, class: 'glyph-restart restart' }));
        g.appendChild(el('path', { d: `M${x - 2} ${y - 3} L${x + 3} ${y} L${x - 2} ${y + 3}`, stroke: '#1b7f3b', fill: 'none', 'stroke-width': 1.6 }));
        break;
      case K.CRASH:
        g.appendChild(el('path', { class: 'glyph-crash crash', d: `M${x - 8} ${y - 8} L${x - 2} ${y - 2} L${x - 7} ${y + 1} L${x + 1} ${y + 8} L${x} ${y + 1} L${x + 7} ${y + 3} L${x + 2} ${y - 2} L${x + 8} ${y - 7} L${x} ${y - 4} Z` }));
        break;
      case K.SEND: g.appendChild(el('circle', { cx: x, cy: y, r: 3, class: 'glyph-dot send' })); break;
      case K.DROP:
        if (it.x[3] === 0) {
          // Lost on its way: a short arrow that ends in a cross.
          const tx = laneX(it.x[0]);
          const ex = x + (tx - x) * 0.45;
          g.appendChild(el('circle', { cx: x, cy: y, r: 3, class: 'glyph-dot' }));
          const l = el('line', { x1: x, y1: y, x2: ex, y2: y, class: 'arrow lost' });
          l.appendChild(el('title', {}, S[it.x[2]] + ': ' + S[it.x[1]]));
          g.appendChild(l);
          cross(g, ex, y);
        }
        break;
      case K.DELIVER: g.appendChild(el('circle', { cx: x, cy: y, r: 2.5, class: 'glyph-dot deliver' })); break;
      case K.TIMER:
        g.appendChild(el('circle', { cx: x, cy: y, r: 6, class: 'glyph-timer timer' }));
        g.appendChild(el('path', { d: `M${x} ${y - 4} L${x} ${y} L${x + 3} ${y + 2}`, stroke: '#7b3fb0', fill: 'none', 'stroke-width': 1.4 }));
        break;
      case K.TIMER_SET: g.appendChild(el('circle', { cx: x, cy: y, r: 3, class: 'glyph-timer' })); break;
      case K.EFFECT: {
        const bad = violating.has(i);
        const s = bad ? 8 : 6;
        g.appendChild(el('path', { d: `M${x} ${y - s} L${x + s} ${y} L${x} ${y + s} L${x - s} ${y} Z`, class: 'glyph-effect effect' + (bad ? ' violating' : '') }));
        if (bad) g.appendChild(el('text', { x: x + 11, y: y, class: 'end-text' }, '#' + it.x[3]));
        break;
      }
      case K.ATTEMPT: g.appendChild(el('rect', { x: x - 3.5, y: y - 3.5, width: 7, height: 7, fill: '#fff', stroke: '#34495e' })); break;
      case K.OBSERVE: g.appendChild(el('circle', { cx: x, cy: y, r: 2.5, class: 'glyph-obs' })); break;
      case K.SITUATION: g.appendChild(el('circle', { cx: x, cy: y, r: 4, class: 'glyph-situation' })); break;
      case K.HEALING:
        g.appendChild(el('line', { x1: PAD, y1: y, x2: PAD + A.length * LANE, y2: y, stroke: '#1b7f3b', 'stroke-dasharray': '8 4', 'stroke-width': 1.5 }));
        break;
    }
  }

  function cross(g, x, y) {
    g.appendChild(el('path', { d: `M${x - 5} ${y - 5} L${x + 5} ${y + 5} M${x + 5} ${y - 5} L${x - 5} ${y + 5}`, class: 'cross lost' }));
  }

  function drawRows(from, to) {
    const g = el('g', { id: 'rows' });
    const sel = stops[selected];
    // Bands first, so that every glyph and text sits on top of them.
    for (let r = from; r < to; r++) {
      const row = rows[r];
      let cls = null;
      if (row.item !== undefined && row.item === turnItem) cls = 'band turn';
      else if (row.stop === selected) cls = 'band sel';
      else if (row.item !== undefined && violating.has(row.item)) cls = 'band bad';
      else if (row.fold) cls = 'band fold';
      else if (row.end && D.end.verdict !== 'holds') cls = 'band end';
      if (cls) g.appendChild(el('rect', { x: 0, y: rowTop(r), width: WIDTH, height: rowH(r), class: cls }));
      if (row.stop === selected) g.appendChild(el('rect', { x: 0, y: rowTop(r), width: 4, height: rowH(r), class: 'sel-bar' }));
    }
    for (const [a, r0, r1] of spans) {
      if (r1 < from || r0 > to) continue;
      g.appendChild(el('line', { x1: laneX(a), y1: rowY(r0), x2: laneX(a), y2: rowY(r1), class: 'lane down' }));
    }
    for (const [r0, r1, a0, a1, cls, i] of allArrows) {
      if (Math.max(r0, r1) < from || Math.min(r0, r1) >= to) continue;
      // Both ends inside one closed fold: nothing to draw.
      if (r0 === r1 && rows[r0].fold) continue;
      const x1 = laneX(a0), y1 = rowY(r0), x2 = laneX(a1), y2 = rowY(r1);
      const line = el('line', { x1: x1, y1: y1, x2: x2 + (x2 > x1 ? -4 : 4), y2: y2, class: cls, 'marker-end': cls === 'arrow to-down' ? '' : (cls === 'arrow dup' ? 'url(#head-dup)' : 'url(#head)') });
      line.appendChild(el('title', {}, describe(items[i])));
      g.appendChild(line);
      if (cls === 'arrow to-down') cross(g, x2, y2);
    }
    for (let r = from; r < to; r++) {
      const row = rows[r];
      const y = rowY(r);
      if (row.item !== undefined) {
        const i = row.item;
        const it = items[i];
        glyph(g, it, r, i);
        const firstOfStep = r === stops[row.stop].first;
        if (firstOfStep) g.appendChild(el('text', { x: textX, y: y, class: 'meta' }, '#' + it.step));
        g.appendChild(el('text', { x: textX + 112, y: y, class: 'meta', 'text-anchor': 'end' }, time(it.t)));
        if (it.k !== K.HEALING) g.appendChild(el('text', { x: textX + 120, y: y, class: 'meta' }, A[it.a]));
        const t = textLines({ x: descX, y: y, class: 'desc k-' + KIND[it.k], 'data-row': r }, wrapped[r]);
        g.appendChild(t);
        if (i === turnItem) {
          const tag = el('text', { x: 6, y: y, class: 'turn-flag', id: 'turn' }, '▶');
          tag.appendChild(el('title', {}, 'the point of no return: after this step no single different decision avoids the violation'));
          g.appendChild(tag);
          t.appendChild(el('tspan', { class: 'turn-flag' }, TURN_TAG));
        }
      } else if (row.fold) {
        const f = row.fold;
        g.appendChild(el('text', { x: laneX(0), y: y, class: 'fold-text' }, '⋮'));
        g.appendChild(textLines({ x: descX, y: y, class: 'fold-text fold', 'data-fold': folds.indexOf(f) }, wrapped[r]));
      } else {
        const e = D.end;
        const t = textLines({ x: 8, y: y, class: 'end-text ' + e.verdict, id: 'violation' }, wrapped[r]);
        t.appendChild(el('title', {}, e.sentence));
        g.appendChild(t);
      }
    }
    return g;
  }

  function render(force) {
    const top = scroller.scrollTop;
    const h = scroller.clientHeight || 600;
    const from = Math.max(0, rowAt(top) - 40);
    const to = Math.min(rows.length, rowAt(top + h) + 41);
    if (!force && drawn && drawn[0] === from && drawn[1] === to) return;
    drawn = [from, to];
    const old = document.getElementById('rows');
    const g = drawRows(from, to);
    if (old) svg.replaceChild(g, old); else svg.appendChild(g);
  }

  function relayout() {
    layout();
    geometry();
    measure();
    drawHead();
    allArrows = arrows();
    spans = downSpans();
    const height = tops[rows.length] + 8;
    svg.setAttribute('width', WIDTH);
    svg.setAttribute('height', height);
    svg.setAttribute('viewBox', `0 0 ${WIDTH} ${height}`);
    const lanes = document.getElementById('lanes');
    const g = el('g', { id: 'lanes' });
    A.forEach((a, i) => g.appendChild(el('line', { x1: laneX(i), y1: 0, x2: laneX(i), y2: height, class: 'lane' })));
    if (lanes) svg.replaceChild(g, lanes); else svg.appendChild(g);
    render(true);
  }

  function defs() {
    const d = el('defs', {});
    for (const [id, color] of [['head', '#34495e'], ['head-dup', '#c25e00']]) {
      const m = el('marker', { id: id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
      m.appendChild(el('path', { d: 'M0 0 L10 5 L0 10 z', fill: color }));
      d.appendChild(m);
    }
    svg.appendChild(d);
  }

  function legend() {
    const box = document.getElementById('legend');
    const entry = (draw, label) => {
      const s = el('svg', { width: 30, height: 14 });
      draw(s);
      const span = document.createElement('span');
      span.appendChild(s);
      span.appendChild(document.createTextNode(' ' + label));
      box.appendChild(span);
    };
    entry((s) => s.appendChild(el('line', { x1: 2, y1: 7, x2: 26, y2: 7, class: 'arrow', 'marker-end': 'url(#head)' })), 'delivered');
    entry((s) => s.appendChild(el('line', { x1: 2, y1: 7, x2: 26, y2: 7, class: 'arrow dup', 'marker-end': 'url(#head-dup)' })), 'network duplicate');
    entry((s) => { s.appendChild(el('line', { x1: 2, y1: 7, x2: 18, y2: 7, class: 'arrow lost' })); cross(s, 20, 7); }, 'lost');
    entry((s) => s.appendChild(el('path', { d: 'M15 1 L21 7 L15 13 L9 7 Z', class: 'glyph-effect' })), 'effect');
    entry((s) => s.appendChild(el('circle', { cx: 15, cy: 7, r: 5, class: 'glyph-timer' })), 'timer');
    entry((s) => s.appendChild(el('line', { x1: 15, y1: 0, x2: 15, y2: 14, class: 'lane down' })), 'down');
    entry((s) => s.appendChild(el('rect', { x: 2, y: 2, width: 26, height: 10, class: 'band turn' })), 'point of no return');
  }

  // ------------------------------------------------------------ the side panel
  const info = document.getElementById('step-info');
  const panel = document.getElementById('states');

  // An actor's state as tables (src/render/html/state_rows.rs): each line is
  // one table row, `f` a field, `g` a group of fields, `h` the head of a
  // table of records and `r` one of its rows; a marked line is shaded.
  function tables(lines, marks) {
    const box = document.createElement('div');
    box.className = 'tables';
    if (!lines.length) {
      box.textContent = 'nothing held';
      box.className = 'tables none';
      return box;
    }
    let kv = null, rec = null;
    const cell = (tag, text, cls) => {
      const c = document.createElement(tag);
      c.textContent = text;
      if (cls) c.className = cls;
      return c;
    };
    lines.forEach((id, j) => {
      const line = S[id];
      const kind = line[0];
      const parts = line.slice(1).split('\t');
      const depth = Number(parts[0]) || 0;
      const tr = document.createElement('tr');
      if (marks && marks.has(j)) tr.className = 'chg';
      if (kind === 'r' && rec) {
        parts.slice(1).forEach((t) => tr.appendChild(cell('td', t)));
        rec.tBodies[0].appendChild(tr);
        return;
      }
      if (!kv) { kv = document.createElement('table'); kv.className = 'kv'; box.appendChild(kv); }
      rec = null;
      const th = cell('th', parts[1] || '');
      th.style.paddingLeft = (4 + depth * 12) + 'px';
      tr.appendChild(th);
      if (kind === 'f') {
        tr.appendChild(cell('td', parts[2] || ''));
      } else if (kind === 'g') {
        th.colSpan = 2;
        th.className = 'group';
      } else if (kind === 'h') {
        th.colSpan = 2;
        th.className = 'group';
        kv.appendChild(tr);
        const holder = document.createElement('tr');
        const td = document.createElement('td');
        td.colSpan = 2;
        td.style.paddingLeft = (4 + depth * 12) + 'px';
        rec = document.createElement('table');
        rec.className = 'rec';
        const head = document.createElement('tr');
        parts.slice(2).forEach((t) => head.appendChild(cell('th', t)));
        rec.appendChild(document.createElement('thead')).appendChild(head);
        rec.appendChild(document.createElement('tbody'));
        td.appendChild(rec);
        holder.appendChild(td);
        kv.appendChild(holder);
        return;
      } else {
        th.colSpan = 2;
        th.className = 'raw';
        th.textContent = parts.slice(1).join('\t');
      }
      kv.appendChild(tr);
    });
    return box;
  }

  function part(cls, label, body) {
    const d = document.createElement('div');
    d.className = 'part ' + cls;
    const l = document.createElement('div');
    l.className = 'label';
    l.textContent = label;
    d.appendChild(l);
    d.appendChild(body);
    return d;
  }

  function showState() {
    const stop = stops[selected];
    const step = stop.end ? lastStep : stop.step;
    info.replaceChildren();
    const title = document.createElement('div');
    title.className = 'title';
    if (stop.end) {
      title.textContent = 'The end of the run: every actor as the run left it';
    } else if (stop.fold) {
      title.textContent = 'Folded: steps #' + stop.fold.a + ' to #' + stop.fold.b + ' repeat the steps above; state after #' + step;
    } else {
      const it = items[rows[stop.first].item];
      title.textContent = 'Step #' + step + ' at ' + time(it.t) + ' · ' + A[it.a];
      const ul = document.createElement('ul');
      for (let r = stop.first; r <= stop.last; r++) {
        const li = document.createElement('li');
        const it = items[rows[r].item];
        li.textContent = describe(it) + (it.k === K.TIMER && it.x[1] >= 0 ? '  (set in step #' + (it.step - it.x[1]) + ')' : '');
        ul.appendChild(li);
      }
      info.appendChild(title);
      info.appendChild(ul);
    }
    if (!info.firstChild) info.appendChild(title);
    const st = stateAt(step);
    const marks = stop.item ? changedAt(step) : {};
    panel.replaceChildren();
    A.forEach((name, a) => {
      const s = st[a];
      const box = document.createElement('div');
      box.className = 'actor' + (marks[a] ? ' changed' : '') + (s.started && !s.state ? ' is-down' : '');
      box.dataset.actor = name;
      const h = document.createElement('h3');
      h.textContent = name;
      const tag = document.createElement('span');
      tag.className = 'tag';
      tag.textContent = !s.started ? 'not started' : !s.state ? 'DOWN' : marks[a] ? 'changed in this step' : '';
      h.appendChild(tag);
      box.appendChild(h);
      let vol;
      if (!s.state) {
        vol = document.createElement('div');
        vol.className = 'gone';
        vol.textContent = s.started ? 'down (crashed): volatile state lost' : '—';
      } else {
        vol = tables(s.state, marks[a] && marks[a].state);
      }
      box.appendChild(part('volatile', 'volatile state (lost in a crash)', vol));
      box.appendChild(part('durable', 'durable storage (survives a crash)', tables(s.storage, marks[a] && marks[a].storage)));
      panel.appendChild(box);
    });
  }

  // ------------------------------------------------------------ selecting
  function select(k, scroll) {
    selected = Math.max(0, Math.min(stops.length - 1, k));
    render(true);
    showState();
    if (scroll) {
      const stop = stops[selected];
      const top = rowTop(stop.first), bottom = tops[stop.last + 1];
      if (top < scroller.scrollTop || bottom > scroller.scrollTop + scroller.clientHeight) {
        scroller.scrollTop = Math.max(0, top - scroller.clientHeight / 3);
        render(false);
      }
    }
    svg.setAttribute('data-selected-step', String(stops[selected].step));
  }

  function openFold(f) {
    f.open = true;
    relayout();
  }

  // Selects the stop that shows `step`, unfolding what hides it.
  function selectStep(step) {
    for (const f of folds) {
      if (!f.open && step >= f.a && step <= f.b) openFold(f);
    }
    let k = stops.findIndex((s) => s.item && s.step >= step);
    if (k < 0) k = stops.length - 1;
    select(k, true);
  }

  svg.addEventListener('click', (ev) => {
    const box = svg.getBoundingClientRect();
    const r = rowAt(ev.clientY - box.top);
    if (r < 0 || r >= rows.length) return;
    const row = rows[r];
    if (row.fold) {
      const step = row.fold.a;
      openFold(row.fold);
      selectStep(step);
    } else {
      select(row.stop, false);
    }
    scroller.focus({ preventScroll: true });
  });

  document.addEventListener('keydown', (ev) => {
    if (ev.target && /^(INPUT|TEXTAREA|SELECT)$/.test(ev.target.tagName)) return;
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    let k = null;
    if (ev.key === 'ArrowRight' || ev.key === 'ArrowDown') k = selected + 1;
    else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowUp') k = selected - 1;
    else if (ev.key === 'Home') k = 0;
    else if (ev.key === 'End') k = stops.length - 1;
    else if (ev.key === 'Enter' && stops[selected].fold) {
      const step = stops[selected].fold.a;
      openFold(stops[selected].fold);
      selectStep(step);
      ev.preventDefault();
      return;
    }
    if (k === null) return;
    ev.preventDefault();
    select(k, true);
  });

  scroller.addEventListener('scroll', () => window.requestAnimationFrame(() => render(false)));

  for (const li of document.querySelectorAll('[data-step]')) {
    li.addEventListener('click', () => {
      selectStep(Number(li.dataset.step));
      scroller.scrollIntoView({ block: 'nearest' });
    });
  }

  for (const b of document.querySelectorAll('button.copy')) {
    b.addEventListener('click', () => {
      const text = b.dataset.copy;
      const done = () => { b.textContent = 'copied'; };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, () => { b.textContent = 'select and copy'; });
      } else {
        b.textContent = 'select and copy';
      }
    });
  }

  const download = document.getElementById('repro-download');
  if (download) {
    const text = document.getElementById('repro-file').textContent;
    download.href = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  }

  defs();
  legend();
  relayout();
  // A new window width lays the diagram out again: lanes and text refit.
  let lastWidth = scroller.clientWidth;
  window.addEventListener('resize', () => window.requestAnimationFrame(() => {
    if (scroller.clientWidth === lastWidth) return;
    lastWidth = scroller.clientWidth;
    relayout();
  }));
  // Start where the run turns, if it does: that is what a reader came for.
  if (D.end.turn_step !== undefined && D.end.turn_step !== null) selectStep(D.end.turn_step);
  else select(0, false);
})();
