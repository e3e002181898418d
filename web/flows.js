// spanbox status page: top talkers (issue #28, docs/FLOWS.md "Top talkers on the page"). Lists
// GET /api/v1/flows/top?by=bytes|packets (the 20 largest flow records of the last minute, kept by
// the primary's exporter) with a by-bytes / by-packets switch; says when metering is off
// (GET /api/v1/flows enabled false) or nothing ended in the window. Self-contained: app.js calls
// initFlows() once and refreshFlows() with every refresh.
import { api } from './api.js';
import { cell } from './table.js';
import { count, bps, DASH } from './format.js';

const $ = (id) => document.getElementById(id);
const fl = { hooks: null, route: true };
const PROTO = { 1: 'ICMP', 6: 'TCP', 17: 'UDP', 47: 'GRE', 50: 'ESP', 58: 'ICMPv6', 132: 'SCTP' };

/** "address:port" (IPv6 in brackets), the address alone for a protocol without ports. */
function endpoint(addr, port, proto) {
	if (![6, 17, 132].includes(proto))
		return addr;
	return `${addr.includes(':') ? `[${addr}]` : addr}:${port}`;
}

/** The record's average rate over its life (first to last frame), DASH under 1 ms. */
function avgRate(f) {
	const s = (Date.parse(f.last) - Date.parse(f.first)) / 1000;
	return Number.isFinite(s) && s >= 0.001 ? bps((f.bytes * 8) / s) : DASH;
}

/** Render the records @p list (GET /flows/top's flows, in its order) into the table #flows. */
export function renderFlows(list) {
	$('flows').tBodies[0].replaceChildren(...list.map((f, i) => {
		const tr = document.createElement('tr');
		tr.dataset.key = String(i + 1);
		cell(tr, i + 1, 'rank');
		cell(tr, endpoint(f.src, f.src_port, f.protocol), 'src');
		cell(tr, endpoint(f.dst, f.dst_port, f.protocol), 'dst');
		cell(tr, PROTO[f.protocol] || f.protocol, 'proto');
		cell(tr, f.vlan ? (f.inner_vlan ? `${f.vlan}.${f.inner_vlan}` : f.vlan) : DASH, 'vlan',
			f.inner_vlan ? 'outer.inner VLAN' : '');
		cell(tr, f.direction === 'tx' ? `${f.port} (tx)` : f.port, 'port',
			f.direction === 'tx' ? 'frames spanbox sent on the port (flows.ports[].direction tx)' : undefined);
		cell(tr, count(f.bytes), 'num bytes', 'IP octets (octetDeltaCount)');
		cell(tr, count(f.packets), 'num packets');
		cell(tr, avgRate(f), 'num rate', 'bytes x 8 over first to last frame');
		cell(tr, f.last ? new Date(f.last).toLocaleTimeString() : DASH, 'ended',
			`first ${f.first || DASH}, ended by ${f.end_reason || DASH}`);
		return tr;
	}));
}

/** The empty-state text: @p text, or hidden when '' (rows are listed). */
function setEmpty(text) {
	const e = $('flows-empty');
	e.textContent = text;
	e.hidden = text === '';
}

/** Refresh the section; quiet (section hidden) when this mgmt has no flows routes. */
export async function refreshFlows() {
	if (!fl.route)
		return;
	const by = $('flows-by-packets').checked ? 'packets' : 'bytes';
	let cfg, top;
	try {
		cfg = (await api('GET', '/api/v1/flows')).data || {};
		top = cfg.enabled ? (await api('GET', `/api/v1/flows/top?by=${by}`)).data || {} : { flows: [] };
	} catch (e) {
		if (e.status === 404) {
			fl.route = false; /* an older mgmt: no flows */
			$('flows-section').hidden = true;
		}
		return; /* the connection line tells when mgmt is gone */
	}
	const flows = top.flows || [];
	renderFlows(flows);
	$('flows-note').textContent = cfg.enabled ?
		`Flow records that ended in the last ${top.window_s || 60} s, most ${by} first; a flow is listed once it ends` +
		` (idle ${cfg.idle_timeout_s} s, active ${cfg.active_timeout_s} s, TCP FIN / RST)` +
		(top.updated ? `. Ranked at ${new Date(top.updated).toLocaleTimeString()}.` : '.') : '';
	if (!cfg.enabled)
		setEmpty('flow metering is off (no flows section in the config, or no port metered): nothing to rank.');
	else if (!flows.length)
		setEmpty(`no flow ended in the last ${top.window_s || 60} s on the metered ports (${(cfg.ports || []).join(', ') || DASH}).`);
	else
		setEmpty('');
}

/** Wire the by-bytes / by-packets switch; @p hooks: {refreshSoon()} of app.js. */
export function initFlows(hooks) {
	fl.hooks = hooks;
	for (const id of ['flows-by-bytes', 'flows-by-packets'])
		$(id).addEventListener('change', () => fl.hooks.refreshSoon());
}
