// spanbox status page: captures into pcapng files (docs/CAPTURE.md "Recording through the API").
// Lists GET /api/v1/captures (state, counters, the files as download links), starts a capture on
// a port (direction, filter, one stop condition) and deletes one (stops it, removes its files).
// Self-contained: app.js calls initCaptures() once and refreshCaptures() with every refresh.
import { api } from './api.js';
import { cell } from './table.js';
import { count, si, DASH } from './format.js';

const $ = (id) => document.getElementById(id);
const cap = { hooks: null, ports: '', route: true };

/** The capture request of the form: one source port, its direction, a filter, a stop condition. */
export function captureFromForm(f) {
	const c = { sources: [{ port: f.elements.port.value, direction: f.elements.direction.value }] };
	const filter = f.elements.filter.value.trim();
	const stopValue = Number(f.elements.stop_value.value);
	if (filter)
		c.filter = filter;
	if (f.elements.snaplen.value)
		c.snaplen = Number(f.elements.snaplen.value);
	if (stopValue > 0)
		c.stop = { [f.elements.stop_kind.value]: stopValue };
	return c;
}

async function deleteCapture(id, button) {
	button.disabled = true;
	try {
		await api('DELETE', `/api/v1/captures/${encodeURIComponent(id)}`, { timeoutMs: 15000 });
		cap.hooks.notice(`capture ${id} stopped, its files removed`);
	} catch (e) {
		cap.hooks.error(e);
		button.disabled = false;
	}
	cap.hooks.refreshSoon();
}

/** Render the captures @p list into the table #captures. */
export function renderCaptures(list) {
	const tbody = $('captures').tBodies[0];
	tbody.replaceChildren(...list.map((c) => {
		const tr = document.createElement('tr');
		const k = c.counters || {};
		tr.dataset.key = String(c.id);
		cell(tr, c.id);
		cell(tr, (c.sources || []).map((s) => `${s.port} (${s.direction || 'both'})`).join(', ') || DASH);
		cell(tr, c.filter || 'all frames');
		cell(tr, c.state, c.state === 'running' ? 'capture-running' : 'capture-ended');
		cell(tr, c.counters ? `${count(k.captured)} pkts, ${si(k.bytes, 'B')}` : DASH, 'num');
		cell(tr, c.counters ? count(k.dropped) : DASH, 'num drops');
		const files = cell(tr, '');
		files.replaceChildren(...(c.downloads || []).map((d) => {
			const a = document.createElement('a');
			a.href = d.href;
			a.download = `capture-${c.id}-${d.n}.pcapng`;
			a.textContent = `${d.n} (${si(d.bytes, 'B')})`;
			return a;
		}));
		if (!files.children.length)
			files.textContent = DASH;
		const act = cell(tr, '');
		const b = document.createElement('button');
		b.type = 'button';
		b.textContent = c.state === 'running' ? 'Stop and delete' : 'Delete';
		b.setAttribute('aria-label', `Delete capture ${c.id}`);
		b.onclick = (ev) => deleteCapture(c.id, ev.currentTarget);
		act.replaceChildren(b);
		return tr;
	}));
	$('captures-empty').hidden = list.length > 0;
}

/** Refresh the captures section (port choices from @p names); quiet when the route is missing. */
export async function refreshCaptures(names) {
	if (names.join('\n') !== cap.ports) {
		cap.ports = names.join('\n');
		const sel = $('c-port');
		const keep = sel.value;
		sel.replaceChildren(...names.map((n) => new Option(n, n)));
		sel.value = names.includes(keep) ? keep : names[0] || '';
	}
	if (!cap.route)
		return;
	try {
		renderCaptures((await api('GET', '/api/v1/captures')).data || []);
	} catch (e) {
		if (e.status === 404)
			cap.route = false; /* an older mgmt: no captures */
	}
}

async function startCapture(ev) {
	ev.preventDefault();
	const f = ev.currentTarget;
	const button = f.querySelector('button[type=submit]');
	button.disabled = true;
	try {
		const r = await api('POST', '/api/v1/captures', { body: captureFromForm(f), timeoutMs: 15000 });
		cap.hooks.notice(`capture ${(r.data || {}).id} started`);
	} catch (e) {
		cap.hooks.error(e);
	}
	button.disabled = false;
	cap.hooks.refreshSoon();
}

/** Wire the form; @p hooks: {refreshSoon(), notice(text), error(e)} of app.js. */
export function initCaptures(hooks) {
	cap.hooks = hooks;
	$('capture-form').addEventListener('submit', startCapture);
}
