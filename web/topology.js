// The topology view of the status page: an SVG drawing of the appliance from one /status read and
// the mirror and map lists. Columns, left to right: ingress tunnel senders, decap rules, the ports the
// network feeds (cross-connected pairs next to each other), mirror sessions and maps, their destinations
// (ports and tool groups) and the groups' members. Every edge carries a counter (packets, bytes)
// whose rate between two reads is written on it; down ports and members are drawn as such.
//
// Test hooks (tests/web/*.test.mjs): every node is <g class="node KIND" data-id="ID">, every edge
// <g class="edge KIND" data-id="KEY" data-from="ID" data-to="ID"> with a <text class="rate">;
// "down" (link down, member down), "holddown" (member waiting out its hold-down) on both.

import { count, bps, pps, DASH } from './format.js';

const NS = 'http://www.w3.org/2000/svg';
const NODE_W = 160, NODE_H = 44, ROW_GAP = 22, XC_GAP = 64, COL_GAP = 210, PAD = 16;
// a column of more than LANE_ROWS nodes (64 ports: 32 cross-connected pairs, 5.5k px tall in one)
// wraps into lanes side by side, SUB_GAP apart (room for a cross-connect's rate label)
const LANE_ROWS = 16, SUB_GAP = 120;

/**
 * The lanes of the drawing, left to right: each column's nodes, a column of more than LANE_ROWS
 * wrapped into several lanes (a cross-connected pair never split). In a wrapped column the nodes
 * fed from the left come first, those with edges to the right last, so that fewer edges cross a lane.
 * @returns Array<{col, nodes}>
 */
function lanesOf(topo, cols) {
	const colOf = new Map(topo.nodes.map((n) => [n.id, n.col]));
	const fedFromLeft = new Set(), toRight = new Set();
	for (const e of topo.edges) {
		if (colOf.get(e.from) < colOf.get(e.to)) {
			toRight.add(e.from);
			fedFromLeft.add(e.to);
		}
	}
	const lanes = [];
	for (const c of cols) {
		let list = topo.nodes.filter((n) => n.col === c);
		if (list.length > LANE_ROWS) {
			const units = [];
			for (const n of list)
				n.xcPeerAbove && units.length ? units[units.length - 1].push(n) : units.push([n]);
			const rank = (u) => (u.some((n) => fedFromLeft.has(n.id)) ? 0 : u.some((n) => toRight.has(n.id)) ? 2 : 1);
			list = units.map((u, i) => ({ u, i, r: rank(u) })).sort((a, b) => a.r - b.r || a.i - b.i).flatMap((x) => x.u);
		}
		let lane = [];
		for (const n of list) {
			if (lane.length >= LANE_ROWS && !n.xcPeerAbove) {
				lanes.push({ col: c, nodes: lane });
				lane = [];
			}
			lane.push(n);
		}
		lanes.push({ col: c, nodes: lane });
	}
	return lanes;
}

function el(name, attrs = {}, text) {
	const e = document.createElementNS(NS, name);
	for (const [k, v] of Object.entries(attrs))
		if (v !== undefined && v !== null)
			e.setAttribute(k, String(v));
	if (text !== undefined)
		e.textContent = text;
	return e;
}

/** A mirror session's tool group: "destination_group" (/status), or destination.group (the config object). */
export function mirrorGroup(m) {
	if (m.destination_group)
		return m.destination_group;
	return m.destination && m.destination.group ? m.destination.group : null;
}

function shortEncap(e) {
	if (!e || !e.type || e.type === 'span')
		return 'SPAN';
	if (e.type === 'rspan')
		return `RSPAN VLAN ${e.vlan ?? '?'}`;
	if (e.type === 'vxlan')
		return `VXLAN VNI ${e.vni ?? 'id'}`;
	return e.type === 'erspan3' ? 'ERSPAN III' : 'ERSPAN II';
}

const sum = (...xs) => (xs.some((x) => Number.isFinite(x)) ? xs.reduce((a, x) => a + (Number.isFinite(x) ? x : 0), 0) : NaN);

/**
 * The drawing's model, from a /status answer, the mirror sessions (GET /api/v1/mirrors, or
 * /status mirrors) and the maps (GET /api/v1/maps maps[]; [] without). Pure: no DOM.
 * @returns {{nodes: Array<{id, kind, col, lines: string[], cls: string, title: string}>,
 *            edges: Array<{key, kind, from, to, packets, bytes, cls, title, label?}>}}
 *          edges' packets / bytes are the cumulative counters whose deltas are the edge's rate
 *          (NaN when not known); a node's col is its column, 0 (tunnel senders) to 5 (members).
 */
export function buildTopology(status, mirrors, maps = []) {
	const ports = status.ports || [];
	const groups = Array.isArray(status.tool_groups) ? status.tool_groups : [];
	const byName = new Map(ports.map((p) => [p.name, p]));
	const nodes = [], edges = [];
	const portDown = (p) => !!(p && p.link && p.link.up === false);

	// members: drawn next to their group (col 5), not as plain ports
	const memberOf = new Map(); // port name -> node id of its (first) member node
	for (const g of groups)
		for (const m of g.members || [])
			if (!memberOf.has(m.port))
				memberOf.set(m.port, `member:${g.name}:${m.port}`);
	const destPorts = new Set();
	for (const m of [...mirrors, ...maps])
		if (!mirrorGroup(m) && m.destination && m.destination.port && !memberOf.has(m.destination.port))
			destPorts.add(m.destination.port);
	const networkPort = (p) => p.peer || p.ingress ||
		[...mirrors, ...maps].some((m) => (m.sources || []).some((s) => s.port === p.name));
	const portNode = (name) => memberOf.get(name) || `port:${name}`;

	// ports: the network's (col 2, cross-connected pairs adjacent), the destinations' (col 4)
	const placed = new Set();
	const portEntry = (p, col) => {
		placed.add(p.name);
		const down = portDown(p);
		const link = !p.link ? 'link unknown' : down ? 'link down' : 'link up';
		nodes.push({ id: `port:${p.name}`, kind: 'port', col, cls: down ? 'down' : '',
			lines: [`port ${p.name}`, `${p.kind || 'port'} · ${link}`],
			title: `port ${p.name} (${p.devargs || p.kind || ''}): ${link}` });
	};
	for (const p of ports) {
		if (placed.has(p.name) || memberOf.has(p.name) || (destPorts.has(p.name) && !networkPort(p)))
			continue;
		portEntry(p, 2);
		const peer = p.peer && byName.get(p.peer);
		if (peer && !placed.has(peer.name) && !memberOf.has(peer.name)) {
			portEntry(peer, 2);
			nodes[nodes.length - 1].xcPeerAbove = true; // drawn with the cross-connect gap above it
		}
	}
	for (const p of ports)
		if (!placed.has(p.name) && !memberOf.has(p.name))
			portEntry(p, 4);

	// cross-connects: one edge per direction, counted as the frames sent out of the far port
	const xcDone = new Set();
	for (const p of ports) {
		const q = p.peer && byName.get(p.peer);
		if (!q || xcDone.has(p.name) || xcDone.has(q.name))
			continue;
		xcDone.add(p.name).add(q.name);
		for (const [a, b] of [[p, q], [q, p]]) {
			const s = b.stats || {};
			edges.push({ key: `xc:${a.name}>${b.name}`, kind: 'xconnect', from: portNode(a.name), to: portNode(b.name),
				packets: s.opackets, bytes: s.obytes, cls: portDown(a) || portDown(b) ? 'down' : '',
				title: `cross-connect ${a.name} → ${b.name}: frames sent out of ${b.name}` });
		}
	}

	// ingress: decap rules (col 1) and the tunnel senders seen (col 0) of ports[].ingress
	for (const p of ports) {
		const ing = p.ingress;
		if (!ing)
			continue;
		const rules = ing.decap || [];
		rules.forEach((r, i) => {
			const id = `decap:${p.name}:${i}`;
			nodes.push({ id, kind: 'decap', col: 1, cls: '',
				lines: [`${r.type} decap`, `into ${p.name}`],
				title: `ingress rule ${i} of port ${p.name}: ${r.type} termination (docs/INGRESS.md)` });
			edges.push({ key: `decap:${p.name}:${i}`, kind: 'decap', from: id, to: portNode(p.name),
				packets: r.packets, bytes: r.bytes, cls: portDown(p) ? 'down' : '',
				title: `frames ${r.type}-decapsulated by rule ${i} of ${p.name}` });
		});
		for (const t of ing.tunnels || []) {
			const id = `tunnel:${p.name}:${t.kind}:${t.source}:${t.id}`;
			nodes.push({ id, kind: 'tunnel', col: 0, cls: '',
				lines: [`${t.kind} ${t.source}`, `id ${t.id}`],
				title: `tunnel sender ${t.source} (${t.kind}, id ${t.id}) to port ${p.name}: ${count(t.packets)} packets` });
			// to the port's rule of that kind when there is one, else to the port
			const ri = rules.findIndex((r) => t.kind && String(t.kind).startsWith(r.type));
			edges.push({ key: `tunnel:${p.name}:${t.kind}:${t.source}:${t.id}`, kind: 'tunnel', from: id,
				to: ri >= 0 ? `decap:${p.name}:${ri}` : portNode(p.name), packets: t.packets, bytes: t.bytes, cls: '',
				title: `frames from tunnel sender ${t.source} id ${t.id}` });
		}
	}

	// mirror sessions (col 3): an edge from each source, one to the destination port or group
	for (const m of mirrors) {
		const id = `session:${m.id}`;
		const c = m.counters || {};
		const g = mirrorGroup(m);
		nodes.push({ id, kind: 'session', col: 3, cls: '',
			lines: [`session ${m.id}${m.name ? ` ${m.name}` : ''}`, `${shortEncap(m.encap)}${m.filter ? ` · ${m.filter}` : ''}`],
			title: `mirror session ${m.id}${m.name ? ` (${m.name})` : ''}: ${count(c.mirrored_packets)} mirrored` });
		for (const s of m.sources || []) {
			const p = byName.get(s.port) || {};
			const st = p.stats || {};
			const dir = s.direction || 'both';
			edges.push({ key: `src:${m.id}:${s.port}`, kind: 'source', from: portNode(s.port), to: id,
				packets: dir === 'rx' ? st.ipackets : dir === 'tx' ? st.opackets : sum(st.ipackets, st.opackets),
				bytes: dir === 'rx' ? st.ibytes : dir === 'tx' ? st.obytes : sum(st.ibytes, st.obytes),
				cls: portDown(p) ? 'down' : '', prefix: `${dir} `,
				title: `source ${s.port} (${dir}) of session ${m.id}: the port's ${dir} frames, before the filter` });
		}
		const to = g ? `group:${g}` : m.destination && m.destination.port ? portNode(m.destination.port) : null;
		if (to)
			edges.push({ key: `dst:${m.id}`, kind: 'destination', from: id, to,
				packets: c.mirrored_packets, bytes: c.mirrored_bytes,
				cls: !g && portDown(byName.get(m.destination.port)) ? 'down' : '',
				title: `session ${m.id} to ${g ? `tool group ${g}` : `port ${m.destination.port}`}: frames mirrored` });
	}

	// maps (col 3, below the sessions): an edge from each source (the port's frames the rules see),
	// one to the destination (the copies sent)
	for (const m of maps) {
		const id = `map:${m.id}`;
		const c = m.counters || {};
		const g = mirrorGroup(m);
		nodes.push({ id, kind: 'map', col: 3, cls: m.collector ? 'collector' : '',
			lines: [`map ${m.id}${m.name ? ` ${m.name}` : ''}`,
				m.collector ? 'collector' : `${count(m.rule_count)} rule${m.rule_count === 1 ? '' : 's'}${m.filter ? ` · ${m.filter}` : ''}`],
			title: `map ${m.id}${m.name ? ` (${m.name})` : ''}: ${m.collector ? 'collector (what no other map passed)' :
				`${count(m.rule_count)} rules`}, ${count(c.passed)} passed, ${count(c.mirrored_packets)} mirrored` });
		for (const s of m.sources || []) {
			const p = byName.get(s.port) || {};
			const st = p.stats || {};
			const dir = s.direction || 'both';
			edges.push({ key: `mapsrc:${m.id}:${s.port}`, kind: 'source', from: portNode(s.port), to: id,
				packets: dir === 'rx' ? st.ipackets : dir === 'tx' ? st.opackets : sum(st.ipackets, st.opackets),
				bytes: dir === 'rx' ? st.ibytes : dir === 'tx' ? st.obytes : sum(st.ibytes, st.obytes),
				cls: portDown(p) ? 'down' : '', prefix: `${dir} `,
				title: `source ${s.port} (${dir}) of map ${m.id}: the port's ${dir} frames, before the rules` });
		}
		const to = g ? `group:${g}` : m.destination && m.destination.port ? portNode(m.destination.port) : null;
		if (to)
			edges.push({ key: `mapdst:${m.id}`, kind: 'destination', from: id, to,
				packets: c.mirrored_packets, bytes: c.mirrored_bytes,
				cls: !g && portDown(byName.get(m.destination.port)) ? 'down' : '',
				title: `map ${m.id} to ${g ? `tool group ${g}` : `port ${m.destination.port}`}: frames its rules passed, mirrored` });
	}

	// tool groups (col 4) and their members (col 5)
	for (const g of groups) {
		const members = g.members || [];
		const up = Number.isFinite(g.members_up) ? g.members_up : members.filter((m) => m.state === 'up').length;
		nodes.push({ id: `group:${g.name}`, kind: 'group', col: 4, cls: up === 0 ? 'down' : '',
			lines: [`group ${g.name}`, `${up} of ${members.length} up · ${g.hash || ''}`],
			title: `tool group ${g.name}: ${up} of ${members.length} members up, ${count(g.no_member)} copies without a member` });
		for (const m of members) {
			const id = `member:${g.name}:${m.port}`;
			if (memberOf.get(m.port) !== id)
				continue; // a port in two groups is drawn once, in its first
			const p = byName.get(m.port);
			const state = m.state || 'unknown';
			const cls = state === 'up' && !portDown(p) ? '' : state === 'holddown' ? 'holddown' : 'down';
			const share = Number.isFinite(m.share) ? ` · ${(m.share * 100).toFixed(1)} %` : '';
			nodes.push({ id, kind: 'member', col: 5, cls, group: g.name,
				lines: [`port ${m.port}`, `${state}${m.reason ? ` (${m.reason})` : ''}${share}`],
				title: `member ${m.port} of ${g.name}: ${state}${m.reason ? `, ${m.reason}` : ''}; ${count(m.buckets)} buckets` });
			edges.push({ key: `member:${g.name}:${m.port}`, kind: 'member', from: `group:${g.name}`, to: id,
				packets: m.packets, bytes: m.bytes, cls, title: `copies of group ${g.name} sent to ${m.port}` });
		}
	}
	return { nodes, edges };
}

/** "12 pkt/s · 9.41 kbit/s", or a dash without a rate (first read, a counter that went back). */
export function rateLabel(r) {
	if (!r || !Number.isFinite(r.pps))
		return DASH;
	return `${pps(r.pps)} · ${bps(r.bps)}`;
}

/**
 * Draw @p topo (buildTopology()) into @p svg, replacing its children.
 * @param rates  edge key -> {pps, bps} (NaN when unknown), written on the edges
 */
export function drawTopology(svg, topo, rates) {
	// the same drawing as last time (nodes, edges, their classes and words): only the rates and the
	// tooltips change, written in place (64 ports: 2 ms instead of a rebuild of ~800 elements)
	const sig = JSON.stringify([topo.nodes.map((n) => [n.id, n.kind, n.col, n.cls, n.lines, !!n.xcPeerAbove]),
		topo.edges.map((e) => [e.key, e.kind, e.from, e.to, e.cls, e.prefix || ''])]);
	if (svg.dataset.sig === sig && svg.querySelector('g.edges')) {
		updateTopology(svg, topo, rates);
		return;
	}
	svg.dataset.sig = sig;
	const cols = [...new Set(topo.nodes.map((n) => n.col))].sort((a, b) => a - b);
	const lanes = lanesOf(topo, cols);
	const pos = new Map();
	// stack each lane; the tallest sets the height, the others are centred on it; a node's "col" in
	// pos is its lane (a cross-connected pair shares one)
	const heights = [];
	const ys = new Map();
	const laneX = [];
	lanes.forEach((lane, li) => {
		laneX.push(li === 0 ? PAD : laneX[li - 1] + NODE_W + (lanes[li - 1].col === lane.col ? SUB_GAP : COL_GAP));
		let y = 0;
		lane.nodes.forEach((n, i) => {
			if (i > 0)
				y += n.xcPeerAbove ? XC_GAP : ROW_GAP;
			ys.set(n.id, y);
			y += NODE_H;
		});
		heights.push(y);
	});
	const H = Math.max(NODE_H, ...heights) + 2 * PAD + 10;
	const W = lanes.length ? laneX[lanes.length - 1] + NODE_W + PAD : 2 * PAD;
	lanes.forEach((lane, li) => {
		const top = PAD + 10 + (H - 2 * PAD - 10 - heights[li]) / 2;
		for (const n of lane.nodes)
			pos.set(n.id, { x: laneX[li], y: top + ys.get(n.id), col: li });
	});

	svg.replaceChildren();
	svg.setAttribute('role', 'img');
	svg.setAttribute('aria-label', 'Topology of the appliance: ports, cross-connects, mirror sessions, maps, tool groups and ingress tunnels, with the rates between two reads');
	svg.append(el('title', {}, svg.getAttribute('aria-label')));
	const defs = el('defs');
	const marker = el('marker', { id: 'topo-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7,
		markerHeight: 7, orient: 'auto-start-reverse' });
	marker.append(el('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' }));
	defs.append(marker);
	svg.append(defs);

	// edges over the nodes: they end at the nodes' borders, and their labels stay readable
	const nodeLayer = el('g', { class: 'nodes' });
	const edgeLayer = el('g', { class: 'edges' });
	svg.append(nodeLayer, edgeLayer);

	const fanOut = new Map(), fanIn = new Map();
	for (const e of topo.edges) {
		fanOut.set(e.from, (fanOut.get(e.from) || 0) + 1);
		fanIn.set(e.to, (fanIn.get(e.to) || 0) + 1);
	}
	const bez = (p0, p1, p2, p3, t) => (1 - t) ** 3 * p0 + 3 * (1 - t) ** 2 * t * p1 + 3 * (1 - t) * t ** 2 * p2 + t ** 3 * p3;
	for (const e of topo.edges) {
		const a = pos.get(e.from), b = pos.get(e.to);
		if (!a || !b)
			continue; // an endpoint not drawn (a source port that is not configured)
		const g = el('g', { class: `edge ${e.kind} ${e.cls || ''}`.trim(), 'data-id': e.key, 'data-from': e.from, 'data-to': e.to });
		g.append(el('title', {}, e.title));
		let d, lx, ly, anchor = 'middle', pre = e.prefix || '';
		if (e.kind === 'xconnect' && a.col === b.col) {
			// vertical, in the gap between the pair: downwards on the left, upwards on the right; both
			// labels on the left (the right is where the sources' edges leave), arrows saying which
			const down = a.y < b.y;
			const x = a.x + NODE_W / 2 + (down ? -18 : 18);
			const y1 = down ? a.y + NODE_H : a.y, y2 = down ? b.y : b.y + NODE_H;
			d = `M${x},${y1} L${x},${y2}`;
			lx = a.x + NODE_W / 2 - 26;
			ly = (y1 + y2) / 2 + (down ? -3 : 11);
			anchor = 'end';
			pre = down ? '↓ ' : '↑ ';
		} else if (b.col > a.col) {
			const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x, y2 = b.y + NODE_H / 2;
			const k = (x2 - x1) / 2;
			d = `M${x1},${y1} C${x1 + k},${y1} ${x2 - k},${y2} ${x2},${y2}`;
			// the label where the edges of a fan part: near the end the edge shares with fewer others
			const t = fanOut.get(e.from) > fanIn.get(e.to) ? 0.64 : fanOut.get(e.from) < fanIn.get(e.to) ? 0.36 : 0.5;
			lx = bez(x1, x1 + k, x2 - k, x2, t);
			ly = bez(y1, y1, y2, y2, t) - 5;
		} else {
			// backwards (a destination that is also a network port): around the right side
			const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x + NODE_W, y2 = b.y + NODE_H / 2;
			const out = Math.max(x1, x2) + 60;
			d = `M${x1},${y1} C${out},${y1} ${out},${y2} ${x2},${y2}`;
			lx = Math.max(x1, x2) + 48;
			ly = (y1 + y2) / 2;
			anchor = 'start';
		}
		g.append(el('path', { class: 'wire', d, 'marker-end': 'url(#topo-arrow)' }));
		g.append(el('text', { class: 'rate', x: lx, y: ly, 'text-anchor': anchor, 'data-pre': pre },
			`${pre}${rateLabel(rates[e.key])}`));
		edgeLayer.append(g);
	}

	for (const n of topo.nodes) {
		const p = pos.get(n.id);
		const g = el('g', { class: `node ${n.kind} ${n.cls || ''}`.trim(), 'data-id': n.id,
			transform: `translate(${p.x},${p.y})` });
		g.append(el('title', {}, n.title));
		g.append(el('rect', { width: NODE_W, height: NODE_H, rx: n.kind === 'session' ? 14 : 4 }));
		n.lines.forEach((t, i) => g.append(el('text', { class: i ? 'sub' : 'name', x: 8, y: 17 + i * 17 },
			t.length > 26 ? `${t.slice(0, 25)}…` : t)));
		nodeLayer.append(g);
	}

	svg.dataset.w = W;
	svg.dataset.h = H;
	fitView(svg);
}

/** Write the rates and the tooltips of @p topo into the drawing of @p svg (drawn from the same nodes and edges). */
function updateTopology(svg, topo, rates) {
	const nodes = new Map(topo.nodes.map((n) => [n.id, n]));
	const edges = new Map(topo.edges.map((e) => [e.key, e]));
	const set = (node, text) => {
		if (node && node.textContent !== text)
			node.textContent = text;
	};
	for (const g of svg.querySelectorAll('g.node')) {
		const n = nodes.get(g.dataset.id);
		if (n)
			set(g.querySelector('title'), n.title);
	}
	let moved = false;
	for (const g of svg.querySelectorAll('g.edge')) {
		const e = edges.get(g.dataset.id);
		if (!e)
			continue;
		set(g.querySelector('title'), e.title);
		const t = g.querySelector('text.rate');
		const text = `${t.dataset.pre || ''}${rateLabel(rates[e.key])}`;
		if (t.textContent !== text) {
			moved = moved || t.textContent.length !== text.length;
			t.textContent = text;
		}
	}
	if (moved || svg.dataset.fitted !== '1') // drawn while hidden: no label measured yet
		fitView(svg);
}

/**
 * The view: the columns, widened to the labels that reach beyond them (a cross-connect's label,
 * anchored at its end left of the first column; a backwards edge's, right of the last), which
 * the viewBox would clip; in steps of 40 so that it does not shift with every new rate.
 */
function fitView(svg) {
	const W = Number(svg.dataset.w), H = Number(svg.dataset.h);
	const edgeLayer = svg.querySelector('g.edges');
	let x0 = 0, x1 = W, measured = false;
	for (const t of edgeLayer.querySelectorAll('text.rate')) {
		const b = t.getBBox(); // 0 x 0 while the page is hidden: then the columns only
		if (b.width > 0) {
			measured = true;
			x0 = Math.min(x0, Math.floor((b.x - 4) / 40) * 40);
			x1 = Math.max(x1, Math.ceil((b.x + b.width + 4 - W) / 40) * 40 + W);
		}
	}
	svg.dataset.fitted = measured || !edgeLayer.querySelector('text.rate') ? '1' : '0';
	svg.setAttribute('viewBox', `${x0} 0 ${x1 - x0} ${H}`);
	svg.style.maxWidth = `${x1 - x0}px`;
}
