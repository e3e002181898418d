// A small SVG line chart: time on x, one or more series on y, axes with units, a legend.

const NS = 'http://www.w3.org/2000/svg';
const W = 640, H = 230;                      // viewBox units
const M = { left: 96, right: 14, top: 26, bottom: 44 };

function el(name, attrs = {}, text) {
	const e = document.createElementNS(NS, name);
	for (const [k, v] of Object.entries(attrs))
		e.setAttribute(k, String(v));
	if (text !== undefined)
		e.textContent = text;
	return e;
}

/** Round step for about @p n ticks over [0, max]: 1, 2 or 5 times a power of ten. */
function niceStep(max, n) {
	const raw = max / n;
	const p = 10 ** Math.floor(Math.log10(raw));
	const f = raw / p;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

const hhmm = (t) => {
	const d = new Date(t);
	return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
};

/**
 * Draw into @p svg (its children are replaced).
 * @param opts.series  [{label, cls, points: [[t_ms, value|null], ...]}]; null values break the line
 * @param opts.from    left edge, ms since the epoch; opts.to: right edge
 * @param opts.yLabel  axis title with its unit, e.g. "bits per second (bit/s)"
 * @param opts.yFormat value -> tick text, e.g. v => "1.2 Mbit/s"
 * @param opts.title   accessible name of the chart
 * @param opts.marks   [t_ms, ...]: appliance starts, drawn as dashed vertical lines labelled
 *                     "start HH:MM" (<g class="start" data-t="t_ms">); those outside [from, to] are left out
 */
export function lineChart(svg, { series, from, to, yLabel, yFormat, title, marks = [] }) {
	svg.replaceChildren();
	svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
	svg.setAttribute('role', 'img');
	svg.setAttribute('aria-label', title);
	svg.append(el('title', {}, title));

	const pw = W - M.left - M.right, ph = H - M.top - M.bottom;
	let max = 0;
	for (const s of series)
		for (const [, v] of s.points)
			if (Number.isFinite(v) && v > max)
				max = v;
	const step = niceStep(max > 0 ? max : 1, 4);
	const top = Math.max(step, Math.ceil((max > 0 ? max : 1) / step) * step);
	const span = Math.max(1, to - from);
	const x = (t) => M.left + ((t - from) / span) * pw;
	const y = (v) => M.top + ph - (v / top) * ph;

	// y grid, ticks and title
	const axes = el('g', { class: 'axes' });
	for (let v = 0; v <= top + step / 2; v += step) {
		axes.append(el('line', { class: 'grid', x1: M.left, x2: M.left + pw, y1: y(v), y2: y(v) }));
		axes.append(el('text', { class: 'tick', x: M.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, yFormat(v)));
	}
	axes.append(el('text', { class: 'axis-title', x: 12, y: M.top + ph / 2, 'text-anchor': 'middle',
		transform: `rotate(-90 12 ${M.top + ph / 2})` }, yLabel));
	// x ticks every 10 minutes (on the clock), axis title
	const tenMin = 600000;
	for (let t = Math.ceil(from / tenMin) * tenMin; t <= to; t += tenMin) {
		axes.append(el('line', { class: 'xtick', x1: x(t), x2: x(t), y1: M.top + ph, y2: M.top + ph + 5 }));
		axes.append(el('text', { class: 'tick', x: x(t), y: M.top + ph + 18, 'text-anchor': 'middle' }, hhmm(t)));
	}
	axes.append(el('line', { class: 'axis', x1: M.left, x2: M.left + pw, y1: M.top + ph, y2: M.top + ph }));
	axes.append(el('line', { class: 'axis', x1: M.left, x2: M.left, y1: M.top, y2: M.top + ph }));
	axes.append(el('text', { class: 'axis-title', x: M.left + pw / 2, y: H - 6, 'text-anchor': 'middle' },
		'time (local clock, last hour)'));
	svg.append(axes);

	// appliance starts: the traffic left of one is an earlier instance's; labels alternate in
	// height so that two close starts stay readable, right of the line unless near the right edge
	marks.filter((t) => t >= from && t <= to).forEach((t, i) => {
		const g = el('g', { class: 'start', 'data-t': t });
		const right = x(t) > M.left + pw - 80;
		g.append(el('title', {}, `appliance start at ${new Date(t).toLocaleString()}: the traffic before it is an earlier instance's`));
		g.append(el('line', { x1: x(t), x2: x(t), y1: M.top, y2: M.top + ph }));
		g.append(el('text', { x: x(t) + (right ? -3 : 3), y: M.top + 11 + (i % 2) * 13, 'text-anchor': right ? 'end' : 'start' },
			`start ${hhmm(t)}`));
		svg.append(g);
	});

	// lines: a path per series, broken where a value is missing
	series.forEach((s, i) => {
		let d = '';
		let pen = false;
		for (const [t, v] of s.points) {
			if (!Number.isFinite(v) || t < from || t > to) {
				pen = false;
				continue;
			}
			d += `${pen ? 'L' : 'M'}${x(t).toFixed(1)},${y(v).toFixed(1)}`;
			pen = true;
		}
		svg.append(el('path', { class: `line ${s.cls}`, d }));
		// legend, top right
		const lx = M.left + pw - 150 + i * 75;
		svg.append(el('line', { class: `line ${s.cls}`, x1: lx, x2: lx + 18, y1: 12, y2: 12 }));
		svg.append(el('text', { class: 'legend', x: lx + 22, y: 16 }, s.label));
	});
}
