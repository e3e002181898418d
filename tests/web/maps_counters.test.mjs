// Browser test of the "Maps" section's rules with per-rule hits, sort by hits and search (web/maps.js)
// against canned API answers: the rules route of this build does not count per rule, sort or search
// yet (issue #27, being added beside this page), so a small server of this test serves web/ and
// answers /api/v1/* itself, its rules route modelled on that work: each rule with `packets` and
// `bytes`, `sort=hits` (packets descending, then index), `search=TEXT` (any field's value contains
// TEXT, case-insensitive), `field=NAME&value=TEXT` (that field's value contains TEXT), `matched`
// (the rules kept) in every answer, paged after the search and the sort. Also a DELETE from the
// sorted view (the rule's own index, not its row), and an mgmt without maps routes (section hidden).
// Started by tests/e2e/95m_web_maps_counters.sh; TAP lines; exit 0 when all passed.
// Environment: SBX_OUT (screenshots, default out/tests/web), SBX_WEB (the page, default web/).
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, failed, launchChromium, note, readTopology, serveStatic, sleep, until } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '../..');
const OUT = process.env.SBX_OUT || path.join(ROOT, 'out/tests/web');
const WEB = process.env.SBX_WEB || path.join(ROOT, 'web');
mkdirSync(OUT, { recursive: true });
const fmt = (n) => n.toLocaleString('en-US');

// ---------------------------------------------------------------------------------------------
// the canned appliance: map 41 with 120 rules and their hits

const RULES = Array.from({ length: 120 }, (_, i) => ({ action: i % 7 === 6 ? 'drop' : 'pass', ip_proto: 6, dst_port: String(i + 1) }));
const HITS = RULES.map((_, i) => ((i * 37) % 101) * 10); // packets of rule i: ties (0) broken by index
const canned = { maps: true, many: false, requests: [], deleted: [], paths: [] };

function keep(r, search, field, value) {
	const has = (v, t) => v !== undefined && String(v).toLowerCase().includes(t.toLowerCase());
	if (field !== null && !has(r[field], value))
		return false;
	return search === null || Object.values(r).some((v) => has(v, search));
}

/** GET /api/v1/maps/41/rules as the per-rule counters work answers it. */
function rules(q) {
	const off = Number(q.get('offset') || 0), lim = Number(q.get('limit') || 100);
	let kept = RULES.map((r, i) => ({ ...r, index: i, packets: HITS[i], bytes: HITS[i] * 100 }))
		.filter((r) => keep(RULES[r.index], q.get('search'), q.get('field'), q.get('value')));
	if (q.get('sort') === 'hits')
		kept = kept.sort((a, b) => b.packets - a.packets || a.index - b.index);
	return { id: 41, total: RULES.length, matched: kept.length, offset: off, limit: lim, sort: q.get('sort') || 'index',
		rules: kept.slice(off, off + lim) };
}

function status() {
	const port = (name) => ({ name, kind: 'ethdev', link: { up: true, speed_mbps: 10000 },
		stats: { ipackets: 0, opackets: 0, ibytes: 0, obytes: 0 }, workers: {} });
	return { appliance: { state: 'up', primary_pid: 1, uptime_s: 10, file_prefix: 'wmc' }, ports: [port('p0'), port('t')],
		workers: [], pools: [], warnings: [], mirrors: [], database: { path: '/tmp/wmc.db', writable: true } };
}

const map = (id, n) => ({ id, name: id === 41 ? 'big' : `m${id}`, collector: false, rule_count: n,
	sources: [{ port: 'p0', direction: 'rx' }], destination: { port: 't' }, filter: '',
	counters: { passed: 1234, mirrored_packets: 1200, mirrored_bytes: 120000 } });
/** GET /api/v1/maps: map 41, or 32 maps (41..72, the most an appliance has) in mode many. */
const mapList = () => ({ classified_frames: 5, contexts: 1, build_ms: 1.5, memory_bytes: 65536,
	maps: canned.many ? Array.from({ length: 32 }, (_, i) => map(41 + i, i ? 2048 : RULES.length)) : [map(41, RULES.length)] });

function answer(req, res) {
	const url = new URL(req.url, 'http://x');
	const json = (code, body) => res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
		.end(JSON.stringify(body));
	canned.paths.push(url.pathname);
	if (url.pathname.startsWith('/api/v1/maps') && !canned.maps)
		return json(404, { error: { code: 404, message: 'no route' } });
	if (url.pathname === '/api/v1/maps/41/rules') {
		canned.requests.push(url.search);
		return json(200, rules(url.searchParams));
	}
	const del = /^\/api\/v1\/maps\/41\/rules\/(\d+)$/.exec(url.pathname);
	if (del && req.method === 'DELETE') {
		canned.deleted.push(Number(del[1]));
		return json(200, { id: 41, deleted: Number(del[1]), rule_count: RULES.length });
	}
	switch (url.pathname) {
	case '/api/v1/health': return json(200, { status: 'ok', appliance: 'up', version: 'canned', uptime_s: 10, problems: [] });
	case '/api/v1/status': return json(200, status());
	case '/api/v1/mirrors': return json(200, []);
	case '/api/v1/maps': return json(200, mapList());
	case '/api/v1/system': return json(200, { warnings: [], ports: [] });
	case '/api/v1/events': return json(200, []);
	default: return json(404, { error: { code: 404, message: 'no route' } });
	}
}

const server = http.createServer((req, res) => (req.url.startsWith('/api/') ? answer(req, res) : serveStatic(WEB, req, res)));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}/`;
note(`serving ${WEB} and canned /api/v1 answers at ${base}`);

// ---------------------------------------------------------------------------------------------

const range = (page) => page.textContent('#map-rules-range');
const rows = (page) => page.$$eval('#map-rules-table tbody tr', (trs) => trs.map((tr) => {
	const c = (k) => (tr.querySelector(`.${k}`) || {}).textContent || '?';
	return { index: Number(c('index')), packets: c('packets'), bytes: c('bytes'), match: c('match'),
		bytesTitle: (tr.querySelector('.bytes') || {}).title };
}));
async function rangeBecomes(page, want, ms = 8000) {
	let last = '';
	await until(async () => (last = await range(page)) === want, ms);
	return last;
}
/** The indexes the model lists for @p q (a query string) */
const modelIdx = (q) => rules(new URLSearchParams(q)).rules.map((r) => r.index).join(',');
const idx = (rs) => rs.map((r) => r.index).join(',');

const errors = [];
const browser = await launchChromium();
try {
	const page = await browser.newPage({ viewport: { width: 1400, height: 1400 } });
	page.on('pageerror', (e) => errors.push(e.message));
	page.on('dialog', (d) => d.accept());
	await page.goto(base, { waitUntil: 'load' });
	await until(() => page.isVisible('#maps tbody tr[data-key="41"]'), 10000);
	await page.click('#maps tbody tr[data-key="41"] button');

	// hits per rule
	let r = await rangeBecomes(page, 'rules 1-50 of 120');
	let rs = await rows(page);
	check('map 41: "rules 1-50 of 120", rules 0..49', r === 'rules 1-50 of 120' && idx(rs) === modelIdx('offset=0&limit=50'), r);
	check('hits: each rule\'s packets and bytes as the API gives them', rs.length === 50 &&
		rs.every((x) => x.packets === fmt(HITS[x.index]) && x.bytesTitle === `${fmt(HITS[x.index] * 100)} bytes` &&
			/^\d[\d.]* k?B$/.test(x.bytes)),
		rs.slice(0, 4).map((x) => `${x.index}: ${x.packets} ${x.bytes} (${x.bytesTitle})`).join('\n'));
	check('no fallback note (the route counts, sorts and searches)', (await page.textContent('#map-rules-note')) === '',
		await page.textContent('#map-rules-note'));

	// sort by hits
	await page.check('#map-sort-hits');
	await until(async () => idx(await rows(page)) === modelIdx('offset=0&limit=50&sort=hits'), 5000);
	rs = await rows(page);
	check('sort by hits: most packets first (the API\'s order), the rules keep their own index',
		idx(rs) === modelIdx('offset=0&limit=50&sort=hits') && rs[0].packets === fmt(Math.max(...HITS)),
		`${idx(rs).slice(0, 60)}\n${rs[0].packets}`);
	check('... asked with sort=hits', canned.requests.at(-1).includes('sort=hits'), canned.requests.at(-1));
	await page.click('#map-next');
	r = await rangeBecomes(page, 'rules 51-100 of 120');
	rs = await rows(page);
	check('... next: "rules 51-100 of 120", the next 50 by hits', idx(rs) === modelIdx('offset=50&limit=50&sort=hits'), idx(rs));
	const victim = rs[0].index;
	await page.click(`#map-rules-table tbody tr[data-key="${victim}"] button`);
	await until(() => canned.deleted.length === 1, 5000);
	check(`delete from the sorted view: DELETE .../rules/${victim}, the rule's own index`, canned.deleted[0] === victim,
		JSON.stringify(canned.deleted));

	// search by a field (KEY=VALUE), with the sort
	await page.fill('#map-search', 'dst_port=8');
	const want8 = rules(new URLSearchParams('field=dst_port&value=8')).matched;
	r = await rangeBecomes(page, `rules 1-${want8} of ${want8} matching (120 in all)`);
	rs = await rows(page);
	check(`search dst_port=8: "rules 1-${want8} of ${want8} matching (120 in all)", by hits`,
		r === `rules 1-${want8} of ${want8} matching (120 in all)` &&
		idx(rs) === modelIdx('offset=0&limit=50&sort=hits&field=dst_port&value=8') && rs.every((x) => x.match.includes('8')), `${r}\n${idx(rs)}`);
	check('... asked with field=dst_port&value=8', /field=dst_port&value=8/.test(canned.requests.at(-1)), canned.requests.at(-1));

	// free text, rule order
	await page.uncheck('#map-sort-hits');
	await page.fill('#map-search', 'drop');
	const wantDrop = rules(new URLSearchParams('search=drop')).matched;
	r = await rangeBecomes(page, `rules 1-${wantDrop} of ${wantDrop} matching (120 in all)`);
	rs = await rows(page);
	check(`search "drop" (any field): the ${wantDrop} drop rules in their order`,
		idx(rs) === modelIdx('offset=0&limit=50&search=drop') && /search=drop/.test(canned.requests.at(-1)), `${r}\n${idx(rs)}`);
	await page.fill('#map-search', 'no-such-text');
	r = await rangeBecomes(page, 'no rule matches (120 in all)');
	check('a search nothing matches: "no rule matches (120 in all)", no row',
		r === 'no rule matches (120 in all)' && (await rows(page)).length === 0, r);
	await page.fill('#map-search', '');
	r = await rangeBecomes(page, 'rules 1-50 of 120');
	check('search cleared: "rules 1-50 of 120"', r === 'rules 1-50 of 120', r);
	await page.locator('#maps-section').screenshot({ path: `${OUT}/maps-hits.png` });

	// the topology's map node and edges
	const topo = await readTopology(page);
	check('topology: node map:41, p0 -> map 41 -> t', !!topo.nodes['map:41'] && topo.edges['mapsrc:41:p0'] &&
		topo.edges['mapdst:41'] && topo.edges['mapdst:41'].to === 'port:t', JSON.stringify(topo.edges));

	// 32 maps (the most there are): one GET /api/v1/maps a refresh, nothing per map
	await page.click('#map-close');
	canned.many = true;
	const n32 = await until(async () => (await page.locator('#maps tbody tr').count()) === 32, 5000);
	canned.paths = [];
	const t0 = Date.now();
	await sleep(3000);
	const s = (Date.now() - t0) / 1000;
	const mapsReq = canned.paths.filter((x) => x === '/api/v1/maps').length;
	const perMap = canned.paths.filter((x) => x.startsWith('/api/v1/maps/')).length;
	const nodes32 = Object.keys((await readTopology(page)).nodes).filter((k) => k.startsWith('map:')).length;
	check(`32 maps: 32 rows, 32 map nodes; ${mapsReq} GET /api/v1/maps in ${s.toFixed(1)} s (one a refresh), ${perMap} per-map requests`,
		n32 && nodes32 === 32 && mapsReq >= 2 && mapsReq <= Math.ceil(s) + 1 && perMap === 0, canned.paths.join(' '));
	const frame = await page.evaluate(async () => { // the page's main thread stays free: a frame comes within 100 ms
		const t = performance.now();
		await new Promise((r) => requestAnimationFrame(() => r()));
		return performance.now() - t;
	});
	check(`... the page answers (a frame after ${frame.toFixed(0)} ms)`, frame < 100);
	await page.locator('figure.topology').screenshot({ path: `${OUT}/topology-32-maps.png` });

	// an mgmt without the maps routes: the section hidden, the page otherwise fine
	canned.maps = false;
	const hidden = await until(() => page.isHidden('#maps-section'), 5000);
	check('GET /api/v1/maps 404 (an older mgmt): the Maps section hidden, no map in the topology',
		hidden && !Object.keys((await readTopology(page)).nodes).some((k) => k.startsWith('map:')));
	check('no script error on the page', errors.length === 0, errors.join('\n'));
} catch (e) {
	check(`the browser test ran to its end (${e.message})`, false);
}
await browser.close();
server.close();
process.exit(failed() ? 1 : 0);
