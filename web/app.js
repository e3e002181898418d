// spanbox status page: polls the REST API every second, renders health, ports, the topology,
// workers, mirrors, maps, tool groups, top talkers, pools, warnings, events and the last hour of throughput, and sends the few actions
// (restart a worker, add / delete a mirror session) with the tab's bearer token.
import { api, ApiError, getToken, setToken } from './api.js';
import { lineChart } from './chart.js';
import { buildTopology, drawTopology, mirrorGroup } from './topology.js';
import { count, si, bps, pps, duration, ms, DASH } from './format.js';
import { initCaptures, refreshCaptures } from './captures.js';
import { initFlows, refreshFlows } from './flows.js';
import { syncTable } from './table.js';
import { initMaps, refreshMaps } from './maps.js';

const PERIOD_MS = 1000;        // status refresh
const SYSTEM_EVERY_MS = 10000; // /system (warnings): heavier, changes rarely
const EVENTS_EVERY_MS = 5000;
const HISTORY_EVERY_MS = 10000;
const REPROBE_MS = 30000;      // ask again for a route that answered 404
// a table of more rows than COMPACT_AT shows COMPACT_ROWS (problems first, then the busiest) and a
// summary line with a "Show all" button; all rows then scroll in a box (style.css .table-box.scroll)
const COMPACT_AT = 12;
const COMPACT_ROWS = 8;
const CHART_PORTS = 4;         // with more than COMPACT_AT ports: charts of the busiest CHART_PORTS

const $ = (id) => document.getElementById(id);

const st = {
	prev: null,                // last successful read: {t, ports, workers, mirrors, groups, edges} for the deltas
	offsetMs: 0,               // appliance clock - browser clock (from the Date header)
	mirrorsRoute: { ok: null, at: 0 }, // does GET /api/v1/mirrors exist (null: not asked yet)
	historyAt: 0, systemAt: 0, eventsAt: 0,
	system: null, systemErr: null,
	portNames: [],
	groupNames: [],
	timer: null, running: false, again: false,
	statusView: 'page',        // GET /status?view=page; '' once an appliance refused the parameter
	showAll: { ports: false, workers: false },
	busiest: [],               // port names by bit rate, busiest first (the charts' choice)
	ticks: 0,                  // refreshes that rendered /status (performance marks sbx-render-<n>)
};

// ------------------------------------------------------------------------------------------
// messages

function showError(text) {
	$('error-text').textContent = text;
	$('error').hidden = false;
}
function clearError() {
	$('error').hidden = true;
	$('error-text').textContent = '';
}
function showNotice(text) {
	const n = $('notice');
	n.textContent = text;
	n.hidden = false;
}
function errorText(e) {
	return e instanceof ApiError ? e.describe() : String(e && e.message ? e.message : e);
}

/** The connection line: state "up", "degraded", "failed" (a worker), "down" or "unreachable", with a sentence. */
function setConn(state, text) {
	const c = $('conn');
	c.textContent = text;
	c.className = `conn conn-${state}`;
	$('main').classList.toggle('stale', !['up', 'degraded', 'failed'].includes(state));
}

// ------------------------------------------------------------------------------------------
// rendering

/** Counter delta per second, NaN without a previous read or when the counter went back (restart). */
function rate(cur, prev, dt) {
	if (!Number.isFinite(cur) || !Number.isFinite(prev) || dt <= 0 || cur < prev)
		return NaN;
	return (cur - prev) / dt;
}

function workerRx(w) {
	if (w.ports_total) // /status?view=page: the worker's counters summed over its ports
		return w.ports_total.rx_packets || 0;
	return Object.values(w.ports || {}).reduce((a, p) => a + (p.rx_packets || 0), 0);
}

/**
 * The rows a long table shows: all of @p items while there are at most COMPACT_AT or the user
 * asked for all (config order, in a scrolling box), else COMPACT_ROWS of them: those @p problem()
 * flags first, then the busiest by @p busy() (NaN: idle), ties in config order. Sets the table's
 * summary line (#NAME-more: @p head, the [text, bad] @p parts, how many are shown) and its "Show all" button.
 */
function compactRows(name, items, busy, problem, head, parts, noun) {
	const bar = $(`${name}-more`), box = $(`${name}-box`), btn = $(`${name}-all`);
	const all = items.length <= COMPACT_AT || st.showAll[name];
	box.classList.toggle('scroll', items.length > COMPACT_AT && all);
	bar.hidden = items.length <= COMPACT_AT;
	if (items.length <= COMPACT_AT)
		return items;
	btn.onclick = () => {
		st.showAll[name] = !st.showAll[name];
		refreshSoon();
	};
	btn.textContent = all ? `Show the ${COMPACT_ROWS} first only` : `Show all ${items.length} ${noun}`;
	btn.setAttribute('aria-expanded', String(all));
	let shown = items;
	if (!all) {
		const score = (x) => (Number.isFinite(busy(x)) ? busy(x) : -1);
		shown = items.map((x, i) => ({ x, i, p: problem(x) ? 1 : 0, b: score(x) }))
			.sort((a, b) => b.p - a.p || b.b - a.b || a.i - b.i)
			.slice(0, COMPACT_ROWS).map((r) => r.x);
	}
	const how = all ? `all ${items.length} ${noun}, in configured order` :
		`${shown.length} of ${items.length} ${noun}: problems first, then the busiest`;
	const text = $(`${name}-more-text`);
	text.replaceChildren(`${head} `, ...parts.map(([t, bad]) => (bad ? Object.assign(document.createElement('span'),
		{ className: 'bad', textContent: t }) : t)).flatMap((n, i) => (i ? [', ', n] : [n])), ` · showing ${how}.`);
	return shown;
}

/** A worker's RX queues as "p0/1, p1/1" (DASH: none). */
function queueText(w) {
	return (w.queues || []).map((x) => `${x.port}/${x.queue}`).join(', ') || DASH;
}

function renderHealth(health, status) {
	const a = status.appliance || {};
	const db = status.database || {};
	// run-time problems (a stalled worker, a drained pool): listed under Warnings with /status's
	const problems = Array.isArray(health.problems) ? health.problems.length : 0;
	const many = `${problems} problem${problems > 1 ? 's' : ''} (see Warnings)`;
	// a failed worker loses what arrives on its queues until it is revived: red, named
	const failed = (status.workers || []).filter((w) => w.state === 'failed');
	if (failed.length)
		setConn('failed', `appliance up · ${failed.map((w) => `worker ${w.id} failed: nobody polls ${queueText(w)}`).join(' · ')}` +
			` · ${many} · uptime ${duration(health.uptime_s)}`);
	else if (health.status === 'degraded' && problems)
		setConn('degraded', `appliance up · degraded: ${many} · uptime ${duration(health.uptime_s)}`);
	else
		setConn('up', `appliance up · uptime ${duration(health.uptime_s)}`);
	$('health').textContent = `version ${health.version || DASH} · primary pid ${a.primary_pid ?? DASH}` +
		` · file prefix ${a.file_prefix || DASH} · database ${db.path || DASH}` +
		` (${si(db.size_bytes, 'B')}, schema ${db.schema_version ?? DASH})` +
		` · updated ${new Date().toLocaleTimeString()}`;
}

/** A port's rate from the previous read: packets or bits per second, RX + TX (NaN without one). */
function portRate(p, prev, dt, bits) {
	const s = p.stats || {}, q = prev && prev.ports[p.name];
	return bits ? (rate(s.ibytes, q && q.ibytes, dt) + rate(s.obytes, q && q.obytes, dt)) * 8
		: rate(s.ipackets, q && q.ipackets, dt) + rate(s.opackets, q && q.opackets, dt);
}

const portDrops = (p) => ((p.workers || {}).drop_packets || 0) + ((p.stats || {}).imissed || 0) + ((p.stats || {}).rx_nombuf || 0);
const portDown = (p) => !!(p.link && !p.link.up);

function renderPorts(ports, prev, dt) {
	const down = ports.filter(portDown).length;
	const shown = compactRows('ports', ports, (p) => portRate(p, prev, dt, false), portDown,
		`${ports.length} ports:`, [[`${ports.length - down} up`], [`${down} down`, down > 0]], 'ports');
	syncTable($('ports').tBodies[0], shown, (p) => p.name, (p) => {
		const s = p.stats || {}, w = p.workers || {};
		const q = prev && prev.ports[p.name];
		const link = p.link ? (p.link.up ? `up ${p.link.speed_mbps ? si(p.link.speed_mbps * 1e6, 'bit/s') : ''}` : 'down') : DASH;
		return [
			p.name,
			p.kind,
			{ text: link.trim(), cls: p.link && p.link.up ? 'ok' : 'bad' },
			{ text: pps(rate(s.ipackets, q && q.ipackets, dt)), cls: 'num rx-pps' },
			{ text: bps(rate(s.ibytes, q && q.ibytes, dt) * 8), cls: 'num rx-bps' },
			{ text: pps(rate(s.opackets, q && q.opackets, dt)), cls: 'num tx-pps' },
			{ text: bps(rate(s.obytes, q && q.obytes, dt) * 8), cls: 'num tx-bps' },
			{ text: count(s.ipackets), cls: 'num rx-packets' },
			{ text: count(s.opackets), cls: 'num tx-packets' },
			{ text: count(portDrops(p)), cls: 'num drops',
				title: `workers dropped ${count(w.drop_packets)}, imissed ${count(s.imissed)}, rx_nombuf ${count(s.rx_nombuf)}` },
			{ text: count((s.ierrors || 0) + (s.oerrors || 0)), cls: 'num errors',
				title: `ierrors ${count(s.ierrors)}, oerrors ${count(s.oerrors)}` },
			burstCell(p.microburst),
			p.peer || DASH,
		];
	});
}

/** A utilisation percentage of ports[].microburst as text ("-" when unknown). */
function pctText(v) {
	return v === null || v === undefined ? DASH : `${v >= 10 ? v.toFixed(0) : v.toFixed(1)} %`;
}

/**
 * The Peak / avg cell of a port (ports[].microburst, docs/MGMT.md "Microbursts"): the busiest window
 * of the last second beside the second's average, received and sent; marked when a peak reached the
 * threshold. The title tells the window, the speed and the bursts counted so far.
 */
function burstCell(mb) {
	if (!mb)
		return { text: DASH, cls: 'num burst', title: 'microburst.enabled is false' };
	if (mb.speed_mbps === null)
		return { text: DASH, cls: 'num burst', title: 'no speed known: set ports[].speed_mbps' };
	const rx = mb.rx || {}, tx = mb.tx || {};
	const hot = [rx.peak_pct, tx.peak_pct].some((v) => v !== null && v >= mb.threshold_pct);
	return {
		text: `RX ${pctText(rx.peak_pct)} / ${pctText(rx.avg_pct)}, TX ${pctText(tx.peak_pct)} / ${pctText(tx.avg_pct)}`,
		cls: `num burst${hot ? ' bad' : ''}`,
		title: `${mb.window_us} us windows of ${si(mb.speed_mbps * 1e6, 'bit/s')} (${mb.speed_source}); ` +
			`bursts at >= ${mb.threshold_pct} %: RX ${count(rx.bursts)}, TX ${count(tx.bursts)}`,
	};
}

/** The ports with ingress stages: counters of the stages and the tunnel senders (ports[].ingress). */
function renderIngress(ports) {
	const withIngress = ports.filter((p) => p.ingress);
	syncTable($('ingress').tBodies[0], withIngress, (p) => p.name, (p) => {
		const w = p.workers || {}, ing = p.ingress;
		const malformed = Object.keys(w).filter((k) => k.startsWith('decap_malformed_'))
			.reduce((a, k) => a + (w[k] || 0), 0);
		const why = Object.keys(w).filter((k) => k.startsWith('decap_malformed_') && w[k])
			.map((k) => `${k.slice(16)} ${count(w[k])}`).join(', ');
		const stages = (ing.decap || []).map((r) => `decap ${r.type} (${count(r.packets)})`);
		if (w.vlan_tags_stripped || w.mpls_labels_stripped)
			stages.push(`stripped ${count(w.vlan_tags_stripped)} tags, ${count(w.mpls_labels_stripped)} labels`);
		if (w.tagged_packets)
			stages.push(`tagged ${count(w.tagged_packets)}`);
		const senders = (ing.tunnels || []).map((t) => `${t.kind} ${t.source} id ${t.id}: ${count(t.packets)} pkts` +
			(t.sequence === 'maintained' ? `, ${count(t.seq_lost)} lost, ${count(t.seq_reordered)} reordered` +
				(t.seq_duplicates ? `, ${count(t.seq_duplicates)} duplicates` : '')
				: t.sequence === 'not_maintained' ? ', sequence not maintained' : ''));
		if (ing.tunnels_untracked)
			senders.push(`${count(ing.tunnels_untracked)} pkts of untracked senders (table full)`);
		return [
			p.name,
			stages.join('; ') || DASH,
			{ text: count(w.decap_packets), cls: 'num decap' },
			{ text: count(malformed), cls: 'num malformed', title: why || 'none' },
			{ text: count((w.non_tunnel_passed || 0) + (w.non_tunnel_dropped || 0)), cls: 'num non-tunnel',
				title: `passed ${count(w.non_tunnel_passed)}, dropped ${count(w.non_tunnel_dropped)}` },
			{ text: count(w.dedup_duplicates), cls: 'num dedup',
				title: `unique ${count(w.dedup_unique)}, evictions ${count(w.dedup_evictions)}` },
			{ text: senders.join('; ') || DASH, cls: 'senders' },
		];
	});
}

async function restartWorker(id, button) {
	button.disabled = true;
	try {
		const r = await api('POST', `/api/v1/workers/${id}/restart`);
		clearError();
		showNotice(`worker ${id}: ${r.data && r.data.status ? r.data.status : 'restart requested'}` +
			(r.data && Number.isFinite(r.data.restarts_before) ? ` (restarts before: ${r.data.restarts_before})` : ''));
	} catch (e) {
		showError(errorText(e));
	}
	refreshSoon();
}

/** What the cycles/packet cell stands for: its window and frames ("-" below 1000 frames). */
function cppTitle(w) {
	const total = Number.isFinite(w.cycles_per_packet_total) ? `; since start ${w.cycles_per_packet_total.toFixed(1)}` : '';
	if (!Number.isFinite(w.cycles_per_packet_window_s))
		return `no window yet${total}`;
	const few = Number.isFinite(w.cycles_per_packet) ? '' : ' (fewer than 1000: not shown)';
	return `over the last ${w.cycles_per_packet_window_s.toFixed(1)} s: ${count(w.cycles_per_packet_frames)} frames${few}${total}`;
}

/** The cells of a hot-standby row of the workers table (status.standbys[]): no queues, no button. */
function standbyCells(sb, nowMs) {
	const parked = Date.parse(sb.parked_since || '');
	return [
		{ text: `standby ${sb.slot}`, cls: 'standby', title: sb.binary || '' },
		{ text: sb.state, cls: `state state-standby-${sb.state}` },
		sb.pid > 0 ? String(sb.pid) : DASH,
		String(sb.lcore),
		{ text: duration(Number.isNaN(parked) ? NaN : (nowMs - parked) / 1000), cls: 'num uptime',
			title: 'parked for' },
		{ text: DASH, cls: 'num restarts' },
		{ text: DASH, cls: 'num cpp' },
		{ text: DASH, cls: 'num' },
		{ text: 'takes over a worker that dies', title: sb.binary || '' },
		DASH,
	];
}

/** A worker that needs a look: not running, or running without CPU time. */
const workerProblem = (w) => w.state !== 'running' || !!w.starved;

function renderWorkers(workers, standbys, prev, dt, nowMs) {
	const by = {};
	for (const w of workers)
		by[w.starved ? 'not scheduled' : w.state] = (by[w.starved ? 'not scheduled' : w.state] || 0) + 1;
	const parts = Object.entries(by).sort((a, b) => b[1] - a[1]).map(([k, n]) => [`${n} ${k}`, k !== 'running']);
	if (standbys.length)
		parts.push([`${standbys.length} standby${standbys.length > 1 ? 's' : ''}`]);
	const shown = compactRows('workers', workers, (w) => rate(workerRx(w), prev && prev.workers[w.id], dt),
		workerProblem, `${workers.length} workers:`, parts, 'workers');
	const rows = [...shown.map((w) => ({ w })), ...standbys.map((sb) => ({ sb }))];
	syncTable($('workers').tBodies[0], rows, (r) => (r.sb ? `standby-${r.sb.slot}` : r.w.id), (r) => {
		if (r.sb)
			return standbyCells(r.sb, nowMs);
		const w = r.w;
		const started = Date.parse(w.start_time || '');
		const live = ['running', 'draining', 'starting'].includes(w.state);
		const up = live && !Number.isNaN(started) ? (nowMs - started) / 1000 : NaN;
		const q = prev && prev.workers[w.id];
		const busy = ['restarting', 'draining', 'starting'].includes(w.state);
		return [
			String(w.id),
			// starved: running, but its thread gets no CPU time (the primary does not kill it for that)
			{ text: w.starved ? `${w.state} · not scheduled` : w.state, cls: `state state-${w.starved ? 'starved' : w.state}`,
				title: `crashes ${w.crashes ?? DASH}, hangs ${w.hangs ?? DASH}, starvations ${w.starvations ?? DASH}` +
					(w.state === 'failed' ? ': crash_limit reached, not restarted until revived' : '') },
			w.pid > 0 ? String(w.pid) : DASH,
			String(w.lcore),
			{ text: duration(up), cls: 'num uptime' },
			{ text: count(w.restarts), cls: 'num restarts' },
			{ text: Number.isFinite(w.cycles_per_packet) ? w.cycles_per_packet.toFixed(1) : DASH, cls: 'num cpp',
				title: cppTitle(w) },
			{ text: pps(rate(workerRx(w), q, dt)), cls: 'num' },
			queueText(w),
			{ button: { label: w.state === 'failed' ? 'Revive' : 'Restart', aria: `Restart worker ${w.id}`,
				disabled: busy, onClick: (ev) => restartWorker(w.id, ev.currentTarget) } },
		];
	});
}

function encapText(e) {
	if (!e || !e.type || e.type === 'span')
		return 'SPAN';
	if (e.type === 'rspan')
		return `RSPAN VLAN ${e.vlan ?? DASH}`;
	const kind = e.type === 'vxlan' ? `VXLAN VNI ${e.vni ?? DASH}` : e.type === 'erspan3' ? 'ERSPAN III' : 'ERSPAN II';
	return `${kind} ${e.src_ip || '?'} → ${e.dst_ip || '?'} via ${e.dst_mac || '?'}`;
}

async function deleteMirror(id, button) {
	button.disabled = true;
	try {
		await api('DELETE', `/api/v1/mirrors/${encodeURIComponent(id)}`);
		clearError();
		showNotice(`mirror session ${id} deleted`);
	} catch (e) {
		showError(errorText(e));
		button.disabled = false;
	}
	refreshSoon();
}

function renderMirrors(mirrors, prev, dt) {
	syncTable($('mirrors').tBodies[0], mirrors, (m) => m.id, (m) => {
		const c = m.counters || {};
		const copies = (c.copied || 0) + (c.shared || 0);
		const share = copies ? ` (${Math.round((100 * (c.copied || 0)) / copies)} % copied)` : '';
		return [
			String(m.id),
			m.name || DASH,
			(m.sources || []).map((s) => `${s.port} (${s.direction || 'both'})`).join(', ') || DASH,
			mirrorGroup(m) ? `group ${mirrorGroup(m)}` : m.destination ? m.destination.port : DASH,
			encapText(m.encap),
			m.filter || 'all frames',
			{ text: pps(rate(c.mirrored_packets, prev && prev.mirrors[m.id], dt)), cls: 'num mirrored-pps' },
			{ text: `${count(c.mirrored_packets)} pkts, ${si(c.mirrored_bytes, 'B')}`, cls: 'num' },
			{ text: `${count(c.copied)} / ${count(c.shared)}${share}`, cls: 'num' },
			{ text: count((c.drop_txfull || 0) + (c.drop_nombuf || 0) + (c.drop_malformed || 0)), cls: 'num drops',
				title: `tx full ${count(c.drop_txfull)}, no mbuf ${count(c.drop_nombuf)}, malformed ${count(c.drop_malformed)}` },
			{ button: { label: 'Delete', aria: `Delete mirror session ${m.id}`, onClick: (ev) => deleteMirror(m.id, ev.currentTarget) } },
		];
	});
}

/** Drops of a tool group (no member up, rate limits) or of a member (rate limit, TX queue full). */
const groupDrops = (g) => (g.no_member || 0) + (g.drop_rate_limit || 0);
const memberDrops = (m) => (m.drop_rate_limit || 0) + (m.drop_txfull || 0);

/**
 * The tool groups of /status (tool_groups): a row per group, then a row per member. The section is
 * hidden while /status carries no tool_groups at all (an appliance without them); "none" when the
 * list is empty.
 */
function renderGroups(groups, prev, dt) {
	$('groups-section').hidden = !Array.isArray(groups);
	const rows = [];
	for (const g of groups || []) {
		rows.push({ g });
		for (const m of g.members || [])
			rows.push({ g, m });
	}
	syncTable($('groups').tBodies[0], rows, (r) => (r.m ? `m:${r.g.name}:${r.m.port}` : `g:${r.g.name}`), (r) => {
		const { g, m } = r;
		if (!m) {
			const q = prev && prev.groups[`g:${g.name}`];
			const n = (g.members || []).length;
			const up = Number.isFinite(g.members_up) ? g.members_up : (g.members || []).filter((x) => x.state === 'up').length;
			return [
				`group ${g.name}`,
				{ text: `${up} of ${n} up`, cls: `state ${up === n ? 'ok' : up === 0 ? 'bad' : 'warn'}` },
				'',
				g.hash || DASH,
				{ text: count(g.buckets), cls: 'num buckets' },
				{ text: '', cls: 'num share' },
				{ text: count(g.packets), cls: 'num packets' },
				{ text: pps(rate(g.packets, q && q.packets, dt)), cls: 'num pps' },
				{ text: bps(rate(g.bytes, q && q.bytes, dt) * 8), cls: 'num bps' },
				{ text: count(groupDrops(g)), cls: 'num drops',
					title: `no member up ${count(g.no_member)}, rate limit ${count(g.drop_rate_limit)}` },
			];
		}
		const q = prev && prev.groups[`m:${g.name}:${m.port}`];
		const state = m.state || DASH;
		return [
			`${g.name} / ${m.port}`,
			{ text: state, cls: `state ${state === 'up' ? 'ok' : state === 'holddown' ? 'warn' : 'bad'}` },
			{ text: m.reason || '', cls: 'reason' },
			'',
			{ text: count(m.buckets), cls: 'num buckets' },
			{ text: Number.isFinite(m.share) ? `${(m.share * 100).toFixed(1)} %` : DASH, cls: 'num share' },
			{ text: count(m.packets), cls: 'num packets' },
			{ text: pps(rate(m.packets, q && q.packets, dt)), cls: 'num pps' },
			{ text: bps(rate(m.bytes, q && q.bytes, dt) * 8), cls: 'num bps' },
			{ text: count(memberDrops(m)), cls: 'num drops',
				title: `rate limit ${count(m.drop_rate_limit)}, TX queue full ${count(m.drop_txfull)}` },
		];
	});
}

/** The topology drawing, with each edge's rate from the previous read; returns its counters for the next. */
function renderTopology(status, mirrors, maps, prev, dt) {
	const topo = buildTopology(status, mirrors, maps);
	const rates = {};
	for (const e of topo.edges) {
		const q = prev && prev.edges[e.key];
		rates[e.key] = { pps: rate(e.packets, q && q.packets, dt), bps: rate(e.bytes, q && q.bytes, dt) * 8 };
	}
	drawTopology($('topology'), topo, rates);
	return Object.fromEntries(topo.edges.map((e) => [e.key, { packets: e.packets, bytes: e.bytes }]));
}

/** The pools table: each pool, and below it its indirect-mbuf pool (shared mirror copies). */
function renderPools(pools) {
	const rows = pools.flatMap((p) => (p.indirect ? [p, { ...p.indirect, socket: p.socket }] : [p]));
	syncTable($('pools').tBodies[0], rows, (p) => p.name, (p) => [
		p.name,
		String(p.socket),
		{ text: count(p.size), cls: 'num' },
		{ text: count(p.in_use), cls: 'num' },
		{ text: count(p.available), cls: 'num' },
		{ text: ms(p.populate_ms), cls: 'num' },
	]);
}

function renderWarnings(status) {
	const items = [];
	const seen = new Set();
	const add = (kind, text) => {
		if (!text || seen.has(text))
			return;
		seen.add(text);
		items.push([kind, text]);
	};
	for (const w of status.warnings || [])
		add(w.kind || 'warning', w.message || w.text || JSON.stringify(w));
	const db = status.database;
	if (db && db.writable === false)
		add('database', `${db.path} is not writable (locked or read-only): changes are refused (503) and no stats history is recorded until it is`);
	const sys = st.system;
	if (sys) {
		for (const w of sys.warnings || [])
			typeof w === 'string' ? add('system', w) : add(w.kind || 'system', w.message || w.text);
		for (const p of sys.ports || [])
			for (const w of p.warnings || [])
				add(`port ${p.name}`, typeof w === 'string' ? w : w.message);
		if (sys.warnings_dropped)
			add('system', `${sys.warnings_dropped} more warnings were dropped`);
	}
	if (st.systemErr)
		add('page', `system information not available: ${st.systemErr}`);
	const ul = $('warnings');
	ul.replaceChildren(...(items.length ? items.map(([k, t]) => {
		const li = document.createElement('li');
		const b = document.createElement('strong');
		b.textContent = `${k}: `;
		li.append(b, t);
		return li;
	}) : [Object.assign(document.createElement('li'), { className: 'none', textContent: 'none' })]));
	$('warnings-section').classList.toggle('has-warnings', items.length > 0);
}

function renderEvents(events) {
	syncTable($('events').tBodies[0], events, (e) => e.id, (e) => [
		e.time ? new Date(e.time).toLocaleString() : DASH,
		e.kind,
		e.worker === null || e.worker === undefined ? DASH : String(e.worker),
		e.detail || '',
	]);
}

/** Fill select @p sel with @p names, keeping its choice when it is still there, else names[pick]. */
function fillChoices(sel, names, pick) {
	const keep = sel.value;
	sel.replaceChildren(...names.map((n) => new Option(n, n)));
	sel.value = names.includes(keep) ? keep : names[Math.max(0, pick)] || '';
}

/** Show the form's field group of each [selector, on] pair and enable its @p tag fields, or hide and disable them. */
function showFields(groups, tag) {
	for (const [sel, on] of groups) {
		const g = document.querySelector(sel);
		g.hidden = !on;
		for (const i of g.querySelectorAll(tag))
			i.disabled = !on;
	}
}

/** Source / destination choices of the form follow the port list (the user's choice is kept). */
function updatePortChoices(names) {
	if (names.join('\n') === st.portNames.join('\n'))
		return;
	st.portNames = names;
	fillChoices($('m-src'), names, 0);
	fillChoices($('m-dst'), names, names.length - 1);
}

/**
 * The tool group choices of the form follow /status tool_groups (the user's choice is kept): the
 * destination kind "tool group" can be chosen while there is a group, and falls back to "port"
 * when the last one goes.
 */
function updateGroupChoices(names) {
	if (names.join('\n') === st.groupNames.join('\n'))
		return;
	st.groupNames = names;
	fillChoices($('m-dgroup'), names, 0);
	const kind = $('m-dkind');
	kind.querySelector('option[value=group]').disabled = names.length === 0;
	if (names.length === 0 && kind.value === 'group')
		kind.value = 'port';
	dstFields();
}

/** Show the port or the tool group choice of the form's destination (the other one disabled). */
function dstFields() {
	const group = $('m-dkind').value === 'group';
	showFields([['.dst-port', !group], ['.dst-group', group]], 'select');
}

// ------------------------------------------------------------------------------------------
// the stats history chart

const HISTORY_METRICS = [['rx_bytes', 'rx', 'rx'], ['tx_bytes', 'tx', 'tx']];

async function refreshHistory(names, nowMs, nbPorts = names.length) {
	const to = Math.floor(nowMs / 1000), from = to - 3600, step = 10;
	const note = $('chart-note');
	const box = $('charts');
	const figs = [];
	try {
		for (const name of names) {
			const series = [];
			let range = null;
			for (const [metric, label, cls] of HISTORY_METRICS) {
				const q = `metric=${metric}&port=${encodeURIComponent(name)}&from=${from}&to=${to}&step=${step}`;
				const r = await api('GET', `/api/v1/stats/history?${q}`);
				const d = r.data || {};
				// rates per second of a byte counter: times 8 for bits (unless already in bits)
				const k = /bit/i.test(d.unit || '') ? 1 : 8;
				series.push({ label: `${label} bit/s`, cls,
					points: (d.points || []).map(([t, v]) => [t * 1000, v === null ? null : v * k]) });
				range = [(d.from ?? from) * 1000, (d.to ?? to) * 1000];
			}
			figs.push({ name, series, range });
		}
	} catch (e) {
		box.replaceChildren();
		if (e instanceof ApiError && e.status === 404 && /no route/i.test(e.message))
			note.textContent = 'history not available: this appliance does not serve /api/v1/stats/history.';
		else
			note.textContent = `history not available: ${errorText(e)}`;
		return;
	}
	// the appliance's starts (events of SQLite): the lines left of one are an earlier instance's
	let starts = [];
	try {
		starts = ((await api('GET', '/api/v1/events?kind=appliance_start&limit=100')).data || [])
			.filter((e) => e.kind === 'appliance_start').map((e) => Date.parse(e.time))
			.filter((t) => Number.isFinite(t) && t >= from * 1000).sort((a, b) => a - b);
	} catch {
		/* no marks: the charts stay */
	}
	note.textContent = `Bits per second received (rx) and sent (tx) per port, ${step} s steps, from the stats history.` +
		(nbPorts > names.length ? ` The ${names.length} busiest of ${nbPorts} ports (bit/s of the last read);` +
			' any other: GET /api/v1/stats/history?port=NAME.' : '') +
		(starts.length ? ' Dashed lines: appliance starts (the traffic before one is an earlier instance\'s).' : '');
	const keep = new Set(names);
	for (const f of [...box.children])
		if (!keep.has(f.dataset.port))
			f.remove();
	for (const f of figs) {
		let fig = box.querySelector(`figure[data-port="${CSS.escape(f.name)}"]`);
		if (!fig) {
			fig = document.createElement('figure');
			fig.dataset.port = f.name;
			const cap = document.createElement('figcaption');
			cap.textContent = `Port ${f.name}`;
			fig.append(cap, document.createElementNS('http://www.w3.org/2000/svg', 'svg'));
			box.append(fig);
		}
		lineChart(fig.querySelector('svg'), { series: f.series, from: f.range[0], to: f.range[1],
			yLabel: 'bits per second (bit/s)', yFormat: (v) => si(v, 'bit/s').replace(/(\.\d*?[1-9])0+ |\.0+ /, '$1 '),
			title: `Port ${f.name}: rx and tx bits per second over the last hour`, marks: starts });
	}
}

// ------------------------------------------------------------------------------------------
// one refresh

async function listMirrors(status) {
	const route = st.mirrorsRoute;
	const now = Date.now();
	if (route.ok === false && now - route.at < REPROBE_MS)
		return status.mirrors || [];
	try {
		const r = await api('GET', '/api/v1/mirrors');
		route.ok = true;
		return Array.isArray(r.data) ? r.data : (r.data && r.data.mirrors) || [];
	} catch (e) {
		if (e instanceof ApiError && e.status === 404) {
			route.ok = false;
			route.at = now;
			return status.mirrors || [];
		}
		throw e;
	}
}

function wentAway(e) {
	if (e instanceof ApiError && e.status === 0) {
		setConn('unreachable', 'appliance unreachable: the management API does not answer (retrying every second)');
	} else if (e instanceof ApiError && e.status === 503) {
		setConn('down', `appliance down: ${e.message}`);
	} else {
		setConn('down', `appliance state unknown: ${errorText(e)}`);
	}
	st.prev = null;
}

async function refresh() {
	let health;
	try {
		health = (await api('GET', '/api/v1/health')).data || {};
	} catch (e) {
		wentAway(e);
		return;
	}
	if (health.appliance !== 'up') {
		setConn('down', 'appliance down: the management API answers, the appliance (primary) is not running');
		$('health').textContent = `version ${health.version || DASH} · waiting for the appliance to start`;
		st.prev = null;
		return;
	}
	let status, mirrors;
	const t = performance.now();
	try {
		let r;
		try {
			r = await api('GET', st.statusView ? `/api/v1/status?view=${st.statusView}` : '/api/v1/status');
		} catch (e) {
			if (!(e instanceof ApiError && e.status === 400 && e.field === 'view'))
				throw e;
			st.statusView = ''; // an appliance without views: the full answer
			r = await api('GET', '/api/v1/status');
		}
		status = r.data;
		if (r.serverTime !== null)
			st.offsetMs = r.serverTime - Date.now();
		mirrors = await listMirrors(status);
	} catch (e) {
		wentAway(e);
		return;
	}
	// the maps (their own GET and section) before the rendering below, which runs with no await in
	// between: every section of one refresh shows one moment (an await there let the workers table
	// show a failed worker while the warnings still showed the refresh before: 25e, 1 run in 5)
	const maps = await refreshMaps();
	const nowMs = Date.now() + st.offsetMs;
	const prev = st.prev;
	const dt = prev ? (t - prev.t) / 1000 : 0;
	const tick = ++st.ticks;
	// the page's own cost per refresh (tests/web/scale.test.mjs reads these measures): sbx-render-N
	// the synchronous rendering of /status, sbx-first-render from navigation to the first one done
	performance.mark(`sbx-render-${tick}-start`);

	renderHealth(health, status);
	renderPorts(status.ports || [], prev, dt);
	renderIngress(status.ports || []);
	renderWorkers(status.workers || [], status.standbys || [], prev, dt, nowMs);
	renderMirrors(mirrors, prev, dt);
	renderGroups(status.tool_groups, prev, dt);
	const edges = renderTopology(status, mirrors, maps, prev, dt);
	renderPools(status.pools || []);
	const names = (status.ports || []).map((p) => p.name);
	updatePortChoices(names);
	updateGroupChoices((status.tool_groups || []).map((g) => g.name));
	renderWarnings(status);
	st.busiest = (status.ports || []).map((p, i) => ({ n: p.name, i, b: portRate(p, prev, dt, true) }))
		.sort((a, b) => (Number.isFinite(b.b) ? b.b : -1) - (Number.isFinite(a.b) ? a.b : -1) || a.i - b.i).map((x) => x.n);
	performance.measure(`sbx-render-${tick}`, `sbx-render-${tick}-start`);
	performance.clearMarks(`sbx-render-${tick}-start`);
	performance.clearMeasures(`sbx-render-${tick - 60}`); // the last minute's stay
	await refreshCaptures(names);
	await refreshFlows();

	st.prev = {
		t,
		ports: Object.fromEntries((status.ports || []).map((p) => [p.name, p.stats || {}])),
		workers: Object.fromEntries((status.workers || []).map((w) => [w.id, workerRx(w)])),
		mirrors: Object.fromEntries(mirrors.map((m) => [m.id, (m.counters || {}).mirrored_packets])),
		groups: Object.fromEntries((status.tool_groups || []).flatMap((g) => [[`g:${g.name}`, g],
			...(g.members || []).map((m) => [`m:${g.name}:${m.port}`, m])])
			.map(([k, x]) => [k, { packets: x.packets, bytes: x.bytes }])),
		edges,
	};

	const now = Date.now();
	if (now - st.systemAt >= SYSTEM_EVERY_MS) {
		st.systemAt = now;
		try {
			st.system = (await api('GET', '/api/v1/system')).data;
			st.systemErr = null;
		} catch (e) {
			st.systemErr = errorText(e);
		}
	}
	renderWarnings(status);
	if (now - st.eventsAt >= EVENTS_EVERY_MS) {
		st.eventsAt = now;
		try {
			renderEvents((await api('GET', '/api/v1/events?limit=10')).data || []);
		} catch {
			/* the table keeps its last rows; the connection line tells when mgmt is gone */
		}
	}
	if (now - st.historyAt >= HISTORY_EVERY_MS) {
		st.historyAt = now;
		await refreshHistory(names.length > COMPACT_AT ? st.busiest.slice(0, CHART_PORTS) : names, nowMs, names.length);
	}
	if (tick === 1)
		performance.measure('sbx-first-render', { start: 0, end: performance.now() });
}

/** Run refresh() now unless one is running (then once more right after it). */
function refreshSoon() {
	if (st.running) {
		st.again = true;
		return;
	}
	clearTimeout(st.timer);
	loop();
}

async function loop() {
	st.running = true;
	const start = performance.now();
	try {
		await refresh();
	} catch (e) {
		console.error('spanbox page: refresh failed', e); // a bug of the page: keep polling
	}
	st.running = false;
	if (st.again) {
		st.again = false;
		st.timer = setTimeout(loop, 0);
		return;
	}
	st.timer = setTimeout(loop, Math.max(100, PERIOD_MS - (performance.now() - start)));
}

// ------------------------------------------------------------------------------------------
// forms

function showTokenState() {
	const has = getToken() !== '';
	$('token-state').textContent = has ? 'token set for this tab' : 'no token (this tab)';
	$('token-forget').hidden = !has;
}

function encapFields() {
	const type = $('m-encap').value;
	showFields([['.encap-rspan', type === 'rspan'], ['.encap-erspan', type === 'erspan2' || type === 'erspan3' || type === 'vxlan']],
		'input');
}

/** The session object of the form (docs/CONFIG.md "mirrors"). */
function mirrorFromForm(f) {
	const v = (name) => f.elements[name].value.trim();
	const m = {
		sources: [{ port: v('source'), direction: v('direction') }],
		destination: v('dkind') === 'group' ? { group: v('dgroup') } : { port: v('destination') },
		encap: { type: v('encap') },
	};
	if (v('id')) // empty: the API takes the lowest free id
		m.id = Number(v('id'));
	if (v('name'))
		m.name = v('name');
	if (v('filter'))
		m.filter = v('filter');
	if (m.encap.type === 'rspan')
		m.encap.vlan = Number(v('vlan'));
	if (m.encap.type === 'erspan2' || m.encap.type === 'erspan3' || m.encap.type === 'vxlan') { // VNI: the session id
		m.encap.src_ip = v('src_ip');
		m.encap.dst_ip = v('dst_ip');
		m.encap.dst_mac = v('dst_mac');
	}
	return m;
}

async function addMirror(ev) {
	ev.preventDefault();
	const f = ev.currentTarget;
	const button = f.querySelector('button[type=submit]');
	const m = mirrorFromForm(f);
	button.disabled = true;
	try {
		await api('POST', '/api/v1/mirrors', { body: m });
		clearError();
		showNotice(`mirror session ${m.id} added`);
		f.elements.id.value = '';
		f.elements.name.value = '';
	} catch (e) {
		showError(errorText(e));
	}
	button.disabled = false;
	refreshSoon();
}

function init() {
	$('token-form').addEventListener('submit', (ev) => {
		ev.preventDefault();
		const t = $('token').value.trim();
		$('token').value = '';
		setToken(t);
		showTokenState();
	});
	$('token-forget').addEventListener('click', () => {
		setToken('');
		showTokenState();
	});
	$('error-close').addEventListener('click', clearError);
	$('m-encap').addEventListener('change', encapFields);
	$('m-dkind').addEventListener('change', dstFields);
	$('mirror-form').addEventListener('submit', addMirror);
	initCaptures({ refreshSoon, notice: (t) => { clearError(); showNotice(t); }, error: (e) => showError(errorText(e)) });
	initFlows({ refreshSoon });
	initMaps({ refreshSoon, notice: (t) => { clearError(); showNotice(t); }, error: (e) => showError(errorText(e)) });
	showTokenState();
	encapFields();
	dstFields();
	loop();
}

init();
