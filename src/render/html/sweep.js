// idemsim's sweep report: one chart per metric against the swept key the
// reader picks, one line per combination of the other swept keys.
(function () {
  'use strict';
  const D = JSON.parse(document.getElementById('data').textContent);
  const NS = 'http://www.w3.org/2000/svg';
  // Okabe and Ito's palette, as the SVG plot (sweep/plot.rs).
  const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#F0E442'];
  const DASHES = ['none', '7 4', '2 3', '10 3 2 3'];
  const W = 400, H = 250, L = 58, R = 14, T = 12, B = 46;
  const varying = D.axes.map((a, i) => i).filter((i) => D.axes[i].values.length > 1);
  let xAxis = varying.length ? varying[0] : 0;

  function el(name, attrs, text) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // Durations in one unit for a whole axis, picked by its largest value.
  const UNITS = [[86400e6, 'd'], [3600e6, 'h'], [60e6, 'min'], [1e6, 's'], [1e3, 'ms'], [1, 'µs']];
  function timeUnit(max) {
    return UNITS.find(([size]) => max >= size) || UNITS[UNITS.length - 1];
  }
  function format(shape, v, max) {
    if (v === null || v === undefined) return '-';
    switch (shape) {
      case 'percent': return (v * 100).toFixed(max < 0.1 ? 1 : 0) + '%';
      case 'time_us': { const [size, unit] = timeUnit(max); return +(v / size).toFixed(1) + ' ' + unit; }
      default: return v.toFixed(max < 4 ? 2 : max < 40 ? 1 : 0);
    }
  }
  // A tick's label: a round value needs no padding zeros (0.5, not 0.50).
  function tickLabel(shape, v, max) {
    switch (shape) {
      case 'percent': return +(v * 100).toFixed(2) + '%';
      case 'time_us': { const [size, unit] = timeUnit(max); return +(v / size).toFixed(3) + ' ' + unit; }
      default: return String(+v.toFixed(6));
    }
  }
  // Each metric's y ticks on round values, computed with the page
  // (src/render/html/ticks.rs): 0, then 1, 2 or 5 × 10^k steps.
  const YTICKS = D.yticks || {};

  // The metrics: the violation rate first, then what the model declares.
  const metrics = [{ name: 'violation_rate', header: 'violation rate', shape: 'percent', value: (r) => r.rate, band: true }]
    .concat(D.metrics.map((m, j) => ({ name: m.name, header: m.header, shape: m.shape, legend: m.legend, value: (r) => r.metrics[j] })));

  function seriesOf() {
    const others = varying.filter((i) => i !== xAxis);
    const groups = new Map();
    D.rows.forEach((r) => {
      const label = others.length ? others.map((i) => D.axes[i].key + '=' + r.values[i]).join(', ') : D.scenario;
      if (!groups.has(label)) groups.set(label, []);
      groups.get(label).push(r);
    });
    const axis = D.axes[xAxis];
    return Array.from(groups, ([label, rows]) => ({
      label,
      rows: rows.map((r) => ({ r, x: axis.pos[axis.values.indexOf(r.values[xAxis])] })).sort((a, b) => a.x - b.x),
    }));
  }

  // Whether any variant has a value of `m`: a chart of none is not drawn.
  function hasValues(m) {
    return D.rows.some((r) => { const v = m.value(r); return v !== null && v !== undefined; });
  }

  // A Wilson interval on a categorical axis: a bar from lo to hi with caps.
  function errorBar(svg, x, y0, y1, color) {
    svg.appendChild(el('path', {
      d: `M${x} ${y0} L${x} ${y1} M${x - 4} ${y0} L${x + 4} ${y0} M${x - 4} ${y1} L${x + 4} ${y1}`,
      stroke: color, 'stroke-width': 1.5, fill: 'none', class: 'error-bar',
    }));
  }

  function chart(m, series) {
    const card = document.createElement('div');
    card.className = 'chart';
    card.dataset.metric = m.name;
    const h = document.createElement('h3');
    h.textContent = m.header;
    if (m.legend) h.title = m.legend;
    card.appendChild(h);
    const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'xMidYMid meet' });
    card.appendChild(svg);
    const values = [];
    for (const s of series) for (const p of s.rows) {
      const v = m.value(p.r);
      if (v !== null && v !== undefined) values.push(m.band ? p.r.hi : v);
    }
    const axis = D.axes[xAxis];
    const pw = W - L - R, ph = H - T - B;
    const px = (x) => L + x * pw;
    const ticks = YTICKS[m.name] || [0, Math.max(...values, 0) || 1];
    const top = ticks[ticks.length - 1];
    const py = (y) => T + (1 - y / top) * ph;
    for (const y of ticks) {
      svg.appendChild(el('line', { x1: px(0), y1: py(y), x2: px(1), y2: py(y), class: 'grid' }));
      svg.appendChild(el('text', { x: px(0) - 6, y: py(y) + 4, 'text-anchor': 'end', class: 'tick' }, tickLabel(m.shape, y, top)));
    }
    svg.appendChild(el('line', { x1: px(0), y1: py(0), x2: px(1), y2: py(0), class: 'axis' }));
    svg.appendChild(el('line', { x1: px(0), y1: T, x2: px(0), y2: py(0), class: 'axis' }));
    const crowded = axis.labels.some((l, i) => i > 0 && Math.abs(axis.pos[i] - axis.pos[i - 1]) * pw < 3.6 * (l.length + axis.labels[i - 1].length) + 6);
    axis.labels.forEach((label, i) => {
      const x = px(axis.pos[i]);
      svg.appendChild(el('line', { x1: x, y1: py(0), x2: x, y2: py(0) + 4, class: 'axis' }));
      svg.appendChild(el('text', { x: x, y: py(0) + 16 + (crowded && i % 2 ? 12 : 0), 'text-anchor': 'middle', class: 'tick' }, label));
    });
    svg.appendChild(el('text', { x: L + pw / 2, y: H - 4, 'text-anchor': 'middle', class: 'tick' },
      axis.key + (axis.categorical ? '' : axis.note)));
    series.forEach((s, k) => {
      const color = PALETTE[k % PALETTE.length];
      const pts = s.rows.filter((p) => m.value(p.r) !== null && m.value(p.r) !== undefined);
      // Side by side on a categorical axis, so that equal values stay visible.
      const nudge = axis.categorical ? (k - (series.length - 1) / 2) * 9 : 0;
      // The rate's Wilson interval: a band along a numeric axis, where the
      // values between points mean something; an error bar per point on a
      // categorical one, where they do not.
      if (m.band && axis.categorical) {
        for (const p of pts) errorBar(svg, px(p.x) + nudge, py(p.r.lo), py(p.r.hi), color);
      } else if (m.band && pts.length) {
        const up = pts.map((p) => `${px(p.x)},${py(p.r.hi)}`);
        const down = pts.slice().reverse().map((p) => `${px(p.x)},${py(p.r.lo)}`);
        const poly = pts.length === 1
          ? [[-6, pts[0].r.hi], [6, pts[0].r.hi], [6, pts[0].r.lo], [-6, pts[0].r.lo]].map(([dx, y]) => `${px(pts[0].x) + dx},${py(y)}`)
          : up.concat(down);
        svg.appendChild(el('polygon', { points: poly.join(' '), fill: color, 'fill-opacity': 0.16 }));
      }
      if (pts.length > 1 && !axis.categorical) {
        svg.appendChild(el('path', {
          d: pts.map((p, i) => (i ? 'L' : 'M') + px(p.x) + ',' + py(m.value(p.r))).join(' '),
          fill: 'none', stroke: color, 'stroke-width': 2, 'stroke-dasharray': DASHES[k % DASHES.length],
        }));
      }
      for (const p of pts) {
        const v = m.value(p.r);
        const dot = el('circle', { cx: px(p.x) + nudge, cy: py(v), r: 4, fill: color, class: 'point' });
        dot.appendChild(el('title', {}, s.label + ' · ' + axis.key + '=' + p.r.values[xAxis] + ': ' + format(m.shape, v, top) +
          (p.r.report ? ' (click: report of seed ' + p.r.seed + ')' : '')));
        if (p.r.report) {
          const a = el('a', { href: p.r.report });
          a.appendChild(dot);
          svg.appendChild(a);
        } else {
          svg.appendChild(dot);
        }
      }
    });
    return card;
  }

  function draw() {
    const series = seriesOf();
    const box = document.getElementById('series');
    box.replaceChildren();
    series.forEach((s, k) => {
      const span = document.createElement('span');
      const sw = el('svg', { width: 26, height: 10 });
      sw.appendChild(el('line', { x1: 1, y1: 5, x2: 25, y2: 5, stroke: PALETTE[k % PALETTE.length], 'stroke-width': 2, 'stroke-dasharray': DASHES[k % DASHES.length] }));
      span.appendChild(sw);
      span.appendChild(document.createTextNode(' ' + s.label));
      box.appendChild(span);
    });
    const charts = document.getElementById('charts');
    charts.replaceChildren(...metrics.filter(hasValues).map((m) => chart(m, series)));
  }

  const controls = document.getElementById('controls');
  if (varying.length > 1) {
    controls.appendChild(document.createTextNode('x axis:'));
    const sel = document.createElement('select');
    sel.id = 'x-axis';
    for (const i of varying) {
      const o = document.createElement('option');
      o.value = String(i);
      o.textContent = D.axes[i].key;
      sel.appendChild(o);
    }
    sel.addEventListener('change', () => { xAxis = Number(sel.value); draw(); });
    controls.appendChild(sel);
    controls.appendChild(document.createTextNode('the other swept keys make the lines; a point links to the report of its lowest failing seed.'));
  } else {
    controls.textContent = 'x axis: ' + D.axes[xAxis].key + '; a point links to the report of its lowest failing seed.';
  }
  draw();
})();
