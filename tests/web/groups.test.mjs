// Browser test of the status page's tool groups (table and topology drawing) against canned API
// answers: the appliance does not serve /status tool_groups yet, so a small server of this test
// serves web/ and answers /api/v1/* itself (2 groups, member t1 of "ids" down, counters that grow
// with the clock), and the mirror form with a tool group as destination (POST /api/v1/mirrors kept by
// the server). Started by tests/e2e/95b_web_groups.sh; TAP lines; exit 0 when all passed.
//
// Environment: SBX_OUT (screenshots, default out/tests/web), SBX_WEB (the page, default web/).
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, failed, fillFields, launchChromium, note, readTopology, serveStatic, sleep, until } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '../..');
const OUT = process.env.SBX_OUT || path.join(ROOT, 'out/tests/web');
const WEB = process.env.SBX_WEB || path.join(ROOT, 'web');
mkdirSync(OUT, { recursive: true });

// ---------------------------------------------------------------------------------------------
// the canned appliance: what /status and /mirrors answer; `mode` changes it during the test

const T0 = Date.now();
const canned = { mode: 'groups', p1Down: false, ingress: true, posted: [] }; // posted: bodies of POST /api/v1/mirrors
/** Two appliance starts in the last hour (events kind appliance_start): the charts must mark them. */
const STARTS = [T0 - 41 * 60000, T0 - 17 * 60000].map((t) => Math.floor(t / 1000) * 1000);
/** A counter that grows by @p perS a second since the test started (rates come out as perS). */
const grow = (perS) => Math.floor(((Date.now() - T0) / 1000) * perS);

function port(name, { peer = null, up = true, pps = 0, ingress = null } = {}) {
	const n = grow(pps);
	return { name, port_id: 0, devargs: `net_null_${name}`, kind: 'ethdev', socket: 0, link: { up, speed_mbps: 10000 },
		rx_queues: 1, tx_queues: 1, peer, ingress,
		stats: { ipackets: n, opackets: n, ibytes: n * 100, obytes: n * 100, imissed: 0, ierrors: 0, oerrors: 0, rx_nombuf: 0 },
		workers: { rx_packets: n, rx_bytes: n * 100, tx_packets: n, tx_bytes: n * 100, drop_packets: 0, drop_bytes: 0 } };
}

function member(p, state, reason, buckets, pps) {
	const n = state === 'up' ? grow(pps) : 5000; // a down member's counters stand still
	return { port: p, state, reason, buckets, share: buckets / 4096, packets: n, bytes: n * 200,
		drop_rate_limit: 3, drop_txfull: state === 'up' ? 0 : 11 };
}

function groups() {
	const ids = [member('t0', 'up', '', 2048, 1000), member('t1', 'down', 'link down', 0, 0), member('t2', 'up', '', 2048, 1000)];
	const rec = [member('r0', 'up', '', 2048, 300), member('r1', 'up', '', 2048, 300)];
	const total = (ms, k) => ms.reduce((a, m) => a + m[k], 0);
	return [
		{ name: 'ids', hash: '5tuple', buckets: 4096, members_up: 2, packets: total(ids, 'packets'), bytes: total(ids, 'bytes'),
			no_member: 0, drop_rate_limit: 6, members: ids },
		{ name: 'rec', hash: '2tuple', buckets: 4096, members_up: 2, packets: total(rec, 'packets'), bytes: total(rec, 'bytes'),
			no_member: 7, drop_rate_limit: 0, members: rec },
	];
}

/** Sessions as GET /api/v1/mirrors lists them: 5 names its group as destination.group, 6 by destination_group. */
function mirrors() {
	const c = (pps) => ({ mirrored_packets: grow(pps), mirrored_bytes: grow(pps) * 200, copied: 0, shared: grow(pps),
		drop_txfull: 0, drop_nombuf: 0, drop_malformed: 0 });
	return [
		{ id: 5, name: 'to-ids', sources: [{ port: 'p0', direction: 'both' }], destination: { group: 'ids' }, counters: c(2000) },
		{ id: 6, name: 'to-rec', sources: [{ port: 'p1', direction: 'rx' }], destination: null, destination_group: 'rec',
			encap: { type: 'span' }, counters: c(600) },
		{ id: 7, sources: [{ port: 'p1', direction: 'tx' }], destination: { port: 'mirror' }, counters: c(50) },
	];
}

function status() {
	const vx = { decap: [{ type: 'vxlan', packets: grow(40), bytes: grow(40) * 150 }],
		tunnels: [{ kind: 'vxlan', source: '192.0.2.9', id: 5001, packets: grow(40), bytes: grow(40) * 150, sequence: 'none' }],
		tunnels_untracked: 0 };
	const s = {
		appliance: { state: 'up', primary_pid: 1, uptime_s: 10, file_prefix: 'wbg', tsc_hz: 1e9 },
		ports: [port('p0', { peer: 'p1', pps: 2000, ingress: canned.ingress ? vx : null }), port('p1', { peer: 'p0', pps: 2000, up: !canned.p1Down }),
			port('t0', { pps: 1000 }), port('t1', { up: false }), port('t2', { pps: 1000 }),
			port('r0', { pps: 300 }), port('r1', { pps: 300 }), port('mirror', { pps: 50 })],
		workers: [], pools: [], warnings: [],
		mirrors: mirrors().map((m) => ({ ...m, destination_group: m.destination_group || (m.destination && m.destination.group) || null })),
		database: { path: '/tmp/wbg.db', size_bytes: 0, schema_version: 4, writable: true },
	};
	if (canned.mode === 'groups')
		s.tool_groups = groups();
	else if (canned.mode === 'empty')
		s.tool_groups = [];
	return s; // mode 'absent': an appliance without tool groups
}

function answer(req, res) {
	const url = new URL(req.url, 'http://x');
	const json = (code, body) => res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
		.end(JSON.stringify(body));
	switch (url.pathname) {
	case '/api/v1/health': return json(200, { status: 'ok', appliance: 'up', version: 'canned', uptime_s: 10, problems: [] });
	case '/api/v1/status': return json(200, status());
	case '/api/v1/mirrors':
		if (req.method === 'POST') { // the form's session, kept for the test; answered as the API does
			let body = '';
			req.on('data', (d) => { body += d; });
			req.on('end', () => {
				try {
					canned.posted.push(JSON.parse(body));
					json(201, { ...canned.posted.at(-1), id: canned.posted.at(-1).id || 9 });
				} catch (e) {
					json(400, { error: { code: 400, message: `bad JSON: ${e.message}` } });
				}
			});
			return undefined;
		}
		return json(200, canned.mode === 'groups' ? mirrors() : mirrors().slice(2));
	case '/api/v1/system': return json(200, { warnings: [], ports: [] });
	case '/api/v1/events': // the starts for kind=appliance_start, else no event
		return json(200, url.searchParams.get('kind') !== 'appliance_start' ? [] : STARTS.toReversed().map((t, i) =>
			({ id: 10 - i, time: new Date(t).toISOString(), kind: 'appliance_start', detail: '8 ports, 0 workers, 1 pools',
				worker: null, pid: 100 + i, client: null })));
	case '/api/v1/stats/history': { // 1 kB/s on every port since the first start, 10 s steps
		const to = Number(url.searchParams.get('to')), from = Number(url.searchParams.get('from'));
		const points = [];
		for (let t = Math.ceil(from / 10) * 10; t <= to; t += 10)
			points.push([t, t * 1000 >= STARTS[0] ? 1000 : null]);
		return json(200, { metric: url.searchParams.get('metric'), unit: 'bytes/s', step: 10, from, to, resolution_s: 1, points });
	}
	default: return json(404, { error: { code: 404, message: 'no route' } });
	}
}

const server = http.createServer((req, res) => (req.url.startsWith('/api/') ? answer(req, res) : serveStatic(WEB, req, res)));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}/`;
note(`serving ${WEB} and canned /api/v1 answers at ${base}`);

// ---------------------------------------------------------------------------------------------

const errors = [];
const browser = await launchChromium();
const page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
page.on('pageerror', (e) => errors.push(`exception: ${e.message}`));
page.on('console', (m) => {
	if ((m.type() === 'error' || m.type() === 'warning') && !/^Failed to load resource.*404/.test(m.text()))
		errors.push(`${m.type()}: ${m.text()}`);
});
const row = (key) => page.locator(`#groups tbody tr[data-key="${key}"]`);
const cellText = (key, cls) => row(key).locator(`td.${cls}`).textContent({ timeout: 2000 });
const cellClass = (key, cls) => row(key).locator(`td.${cls}`).getAttribute('class', { timeout: 2000 });
/** The value of "1.02 kpkt/s" (or of its bit/s part, unit "bit/s"), NaN without one. */
function rateOf(text, unit = 'pkt/s') {
	const m = new RegExp(`([\\d.]+) ([kMG]?)${unit.replace('/', '\\/')}`).exec(text || '');
	return m ? Number(m[1]) * { '': 1, k: 1e3, M: 1e6, G: 1e9 }[m[2]] : NaN;
}
/** The edge labels of the drawing that reach out of its viewBox (clipped): [] when none. */
const labelsOutside = () => page.evaluate(() => {
	const svg = document.getElementById('topology'), vb = svg.viewBox.baseVal;
	return [...svg.querySelectorAll('g.edge text.rate')].map((t) => ({ key: t.parentNode.dataset.id, b: t.getBBox() }))
		.filter(({ b }) => b.x < vb.x || b.x + b.width > vb.x + vb.width || b.y < vb.y || b.y + b.height > vb.y + vb.height)
		.map(({ key, b }) => `${key} at x ${b.x.toFixed(0)}..${(b.x + b.width).toFixed(0)} (viewBox x ${vb.x}..${vb.x + vb.width})`);
});
const hhmm = (t) => `${String(new Date(t).getHours()).padStart(2, '0')}:${String(new Date(t).getMinutes()).padStart(2, '0')}`;
/** Within 25 % of @p want: the rates are timed by a shared, noisy machine. */
const near = (v, want) => v > want * 0.75 && v < want * 1.25;
const has = (cls, word) => new RegExp(`(^| )${word}( |$)`).test(cls || '');

try {
	await page.goto(base, { waitUntil: 'load' });
	const up = await until(async () => /appliance up/.test(await page.locator('#conn').textContent()), 8000);
	check('page loads against the canned API and says "appliance up"', up);

	// 1. the table: a row per group, a row per member; t1 down with its reason
	const rowsOk = await until(async () => (await page.locator('#groups tbody tr').count()) === 7, 5000);
	const keys = await page.locator('#groups tbody tr').evaluateAll((trs) => trs.map((t) => t.dataset.key));
	check('tool groups table: shown, with a row for each of the 2 groups followed by one for each of their 5 members',
		rowsOk && await page.locator('#groups-section').isVisible() &&
		keys.join(' ') === 'g:ids m:ids:t0 m:ids:t1 m:ids:t2 g:rec m:rec:r0 m:rec:r1', `rows: ${keys.join(' ')}`);
	const t1 = { state: await cellText('m:ids:t1', 'state'), cls: await cellClass('m:ids:t1', 'state'),
		reason: await cellText('m:ids:t1', 'reason'), share: await cellText('m:ids:t1', 'share') };
	const t0 = { state: await cellText('m:ids:t0', 'state'), cls: await cellClass('m:ids:t0', 'state'),
		share: await cellText('m:ids:t0', 'share'), buckets: await cellText('m:ids:t0', 'buckets') };
	check('tool groups table: member t1 shown "down" (marked bad) with its reason "link down"; t0 "up" with 2,048 buckets, share 50.0 %',
		t1.state === 'down' && has(t1.cls, 'bad') && t1.reason === 'link down' && t1.share === '0.0 %' &&
		t0.state === 'up' && has(t0.cls, 'ok') && t0.buckets === '2,048' && t0.share === '50.0 %',
		`t1 ${JSON.stringify(t1)}; t0 ${JSON.stringify(t0)}`);
	const g = { state: await cellText('g:ids', 'state'), cls: await cellClass('g:ids', 'state'),
		drops: await cellText('g:rec', 'drops'), mdrops: await cellText('m:ids:t1', 'drops') };
	check('tool groups table: group ids "2 of 3 up" (marked warn); drops: rec 7 (no member), t1 14 (rate limit 3 + tx full 11)',
		g.state === '2 of 3 up' && has(g.cls, 'warn') && g.drops === '7' && g.mdrops === '14', JSON.stringify(g));
	const rates = await until(async () => {
		const r = { t0: await cellText('m:ids:t0', 'pps'), r0: await cellText('m:rec:r0', 'pps'), ids: await cellText('g:ids', 'pps') };
		return /kpkt\/s/.test(r.t0) && /pkt\/s/.test(r.r0) && /kpkt\/s/.test(r.ids) ? r : null;
	}, 5000);
	check('tool groups table: members\' and groups\' rates from two reads (t0 about 1 kpkt/s, ids about 2 kpkt/s)',
		rates && near(rateOf(rates.t0), 1000) && near(rateOf(rates.ids), 2000) && near(rateOf(rates.r0), 300), JSON.stringify(rates));
	const dest = await page.locator('#mirrors tbody tr[data-key="5"] td').nth(2).textContent();
	const dest6 = await page.locator('#mirrors tbody tr[data-key="6"] td').nth(2).textContent();
	check('mirror sessions table: the destination of sessions 5 and 6 is their group (destination.group, destination_group)',
		dest === 'group ids' && dest6 === 'group rec', `5: "${dest}", 6: "${dest6}"`);

	// 2. the drawing: group nodes, members (t1 down), the edges session -> group -> member
	const topo = await until(async () => {
		const t = await readTopology(page);
		return t.nodes['group:ids'] && /pkt\/s/.test((t.edges['member:ids:t0'] || {}).rate) ? t : null;
	}, 5000) || { nodes: {}, edges: {} };
	const n = topo.nodes, e = topo.edges;
	check('topology: a node for each group and member; t1\'s node marked down, the others not',
		['group:ids', 'group:rec', 'member:ids:t0', 'member:ids:t1', 'member:ids:t2', 'member:rec:r0', 'member:rec:r1'].every((k) => n[k]) &&
		has(n['member:ids:t1'], 'down') && !has(n['member:ids:t0'], 'down') && !has(n['member:rec:r0'], 'down') &&
		!n['port:t0'] && !n['port:t1'], JSON.stringify(n));
	const want = [['dst:5', 'session:5', 'group:ids'], ['dst:6', 'session:6', 'group:rec'], ['dst:7', 'session:7', 'port:mirror'],
		['member:ids:t0', 'group:ids', 'member:ids:t0'], ['member:ids:t1', 'group:ids', 'member:ids:t1'],
		['member:rec:r1', 'group:rec', 'member:rec:r1'], ['src:5:p0', 'port:p0', 'session:5'], ['xc:p0>p1', 'port:p0', 'port:p1'],
		['decap:p0:0', 'decap:p0:0', 'port:p0'], ['tunnel:p0:vxlan:192.0.2.9:5001', 'tunnel:p0:vxlan:192.0.2.9:5001', 'decap:p0:0']];
	const bad = want.filter(([k, from, to]) => !e[k] || e[k].from !== from || e[k].to !== to).map(([k]) => k);
	check('topology: edges sessions -> groups -> members, session 7 -> port mirror, p0 -> session 5, p0 -> p1, the vxlan sender -> rule -> p0',
		bad.length === 0 && has(e['member:ids:t1'].cls, 'down') && !has(e['member:ids:t0'].cls, 'down'),
		`wrong or missing: ${bad.join(', ')}\n${JSON.stringify(e)}`);
	check('topology: rates on the edges (member t0 about 1 kpkt/s and 1.6 Mbit/s, session 5 about 2 kpkt/s)',
		near(rateOf(e['member:ids:t0'].rate), 1000) && near(rateOf(e['member:ids:t0'].rate, 'bit/s'), 1.6e6) &&
		near(rateOf(e['dst:5'].rate), 2000), `t0: "${e['member:ids:t0'].rate}", dst:5: "${e['dst:5'].rate}"`);
	const out = await labelsOutside();
	check('topology: every edge label lies inside the drawing (none clipped)', out.length === 0, out.join('\n'));
	await page.locator('#topology').screenshot({ path: path.join(OUT, 'topology-groups.png') });

	// 2b. without ingress the cross-connected pair is the first column: its labels (left of the
	// wires, anchored at their end) must not be cut at the drawing's left edge
	canned.ingress = false;
	const noIngress = await until(async () => (!(await readTopology(page)).nodes['decap:p0:0'] &&
		/pkt\/s/.test((await page.locator('#topology g.edge[data-id="xc:p0>p1"] text.rate').textContent()) || '') ? true : null), 5000);
	const outFirst = await labelsOutside();
	check('topology: with the cross-connected ports in the first column, their rate labels are inside the drawing',
		noIngress && outFirst.length === 0, `drawn without ingress: ${noIngress}; outside: ${outFirst.join('; ')}`);
	await page.locator('#topology').screenshot({ path: path.join(OUT, 'topology-first-column.png') });
	canned.ingress = true;

	// 2c. the charts mark the appliance's starts of the last hour (what came before is another instance's)
	const marks = await until(async () => {
		const m = await page.locator('#charts figure[data-port="p0"] svg g.start').evaluateAll((gs) => gs.map((g) => ({
			t: Number(g.dataset.t), text: g.querySelector("text").textContent, inside: (() => {
				const b = g.getBBox(), vb = g.ownerSVGElement.viewBox.baseVal;
				return b.x >= vb.x && b.x + b.width <= vb.x + vb.width;
			})() })));
		return m.length >= 2 ? m : null;
	}, 15000) || [];
	const note2 = await page.locator('#chart-note').textContent();
	check('throughput chart of p0: the 2 appliance starts of the last hour marked at their times, labelled "start HH:MM", inside the chart; the note says what the marks are',
		marks.length === 2 && marks.every((m, i) => m.t === STARTS[i] && m.text === `start ${hhmm(STARTS[i])}` && m.inside) &&
		/start/.test(note2), `marks ${JSON.stringify(marks)}; note "${note2}"`);
	await page.locator('#charts figure[data-port="p0"]').screenshot({ path: path.join(OUT, 'chart-starts.png') }).catch(() => {});

	// 3. the form's destination: a tool group of /status, posted as destination.group
	const choices = await until(async () => {
		const g = await page.locator('#m-dgroup option').evaluateAll((os) => os.map((o) => o.value));
		return g.join(' ') === 'ids rec' ? g : null;
	}, 4000);
	const kindOff = await page.locator('#m-dkind option[value=group]').isDisabled();
	check('mirror form: "tool group" can be chosen as destination kind, its choices the groups of /status (ids, rec); the group choice hidden while the kind is port',
		choices && !kindOff && await page.locator('#m-dst').isVisible() && !(await page.locator('#m-dgroup').isVisible()),
		`choices ${JSON.stringify(choices)}, kind option disabled ${kindOff}`);
	await page.selectOption('#m-dkind', 'group');
	const swapped = await page.locator('#m-dgroup').isVisible() && !(await page.locator('#m-dst').isVisible()) &&
		await page.locator('#m-dst').isDisabled();
	await fillFields(page, [['#m-dgroup', 'rec'], ['#m-src', 'p1'], ['#m-dir', 'rx'], ['#m-id', '12'], ['#m-name', 'to-rec-form']]);
	await page.click('#mirror-form button[type=submit]');
	const sent = await until(async () => canned.posted.at(-1) || null, 4000);
	check('mirror form: with destination kind "tool group" and group rec chosen, POST /api/v1/mirrors gets destination {"group": "rec"} (no port)',
		swapped && sent && sent.id === 12 && sent.name === 'to-rec-form' && JSON.stringify(sent.destination) === '{"group":"rec"}' &&
		sent.sources[0].port === 'p1' && sent.sources[0].direction === 'rx', `swapped ${swapped}; posted ${JSON.stringify(sent)}`);
	await fillFields(page, [['#m-dkind', 'port'], ['#m-dst', 'mirror'], ['#m-id', '13']]);
	await page.click('#mirror-form button[type=submit]');
	const sentPort = await until(async () => (canned.posted.length === 2 ? canned.posted[1] : null), 4000);
	check('mirror form: back to kind "port", the session goes to port mirror as before (destination {"port": "mirror"})',
		sentPort && JSON.stringify(sentPort.destination) === '{"port":"mirror"}', JSON.stringify(sentPort));
	await page.selectOption('#m-dkind', 'group'); // chosen when the groups go (4. below)

	// 4. a port link-down is drawn as such
	canned.p1Down = true;
	const p1 = await until(async () => (has((await readTopology(page)).nodes['port:p1'], 'down') ? true : null), 4000);
	check('topology: port p1 with link down in /status is drawn down, and the cross-connect with it', p1 &&
		has((await readTopology(page)).edges['xc:p0>p1'].cls, 'down'));

	// 5. no groups: "none" for an empty list, the section hidden when /status has no tool_groups
	canned.mode = 'empty';
	const none = await until(async () => (await page.locator('#groups tbody tr').count()) === 0 &&
		(await page.locator('#groups-section .empty').isVisible()), 4000);
	const noneText = none ? await page.locator('#groups-section .empty').textContent() : '';
	const gone = (t) => !Object.keys(t.nodes).some((k) => /^(group|member):/.test(k));
	check('tool_groups empty: the table says "none" and the drawing has no group or member node',
		none && noneText === 'none' && gone(await readTopology(page)), `empty text "${noneText}"`);
	const back = { kind: await page.locator('#m-dkind').inputValue(), off: await page.locator('#m-dkind option[value=group]').isDisabled(),
		port: await page.locator('#m-dst').isVisible(), groups: await page.locator('#m-dgroup option').count() };
	check('mirror form: with no group left the kind "tool group" cannot be chosen and the form is back on "port"',
		back.kind === 'port' && back.off && back.port && back.groups === 0, JSON.stringify(back));
	canned.mode = 'absent';
	const hidden = await until(async () => !(await page.locator('#groups-section').isVisible()), 4000);
	const tAbsent = await readTopology(page);
	check('no tool_groups in /status: the section is hidden; ports t0..r1 are drawn as plain ports',
		hidden && gone(tAbsent) && tAbsent.nodes['port:t1'] && has(tAbsent.nodes['port:t1'], 'down'), JSON.stringify(tAbsent.nodes));

	await sleep(500);
	check('no exception and no console error from the page', errors.length === 0, errors.join('\n'));
} catch (err) {
	check(`the test ran to its end (${err.message.split('\n')[0]})`, false, err.stack);
} finally {
	await browser.close().catch(() => {});
	server.close();
}
process.exit(failed() ? 1 : 0);
