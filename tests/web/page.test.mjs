// Browser test of the status page (web/) against a running appliance, in Debian's headless
// Chromium driven by playwright-core. Started by tests/e2e/95_web.sh, which provides the instance.
// Prints TAP lines ("ok - ..." / "not ok - ...", "# ..." comments); exit 0 when all passed.
//
// Environment:
//   SBX_MGMT_URL    the instance's mgmt, e.g. http://127.0.0.1:18240 (required)
//   SBX_TOKEN       its bearer token (required)
//   SBX_MGMT_STOP   a shell script that stops mgmt (returns once it is gone)
//   SBX_MGMT_START  a shell script that starts mgmt again (returns once it answers)
//   SBX_PRIMARY_STOP, SBX_PRIMARY_START  the same for the primary (with its demo network and traffic)
//   SBX_OUT         folder for screenshots (default: out/tests/web of the tree)
//   SBX_WEB         the page's folder (default: web/ of the tree)
// If mgmt does not serve the page itself at GET / yet, a small local server serves SBX_WEB and
// passes /api/ through to mgmt (closing the connection when mgmt does not answer, as mgmt down would).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, failed, launchChromium, note, readTopology, serveStatic, sleep, until } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '../..');
const MGMT = process.env.SBX_MGMT_URL;
const TOKEN = process.env.SBX_TOKEN;
const OUT = process.env.SBX_OUT || path.join(ROOT, 'out/tests/web');
const WEB = process.env.SBX_WEB || path.join(ROOT, 'web');
if (!MGMT || !TOKEN) {
	console.log('not ok - SBX_MGMT_URL and SBX_TOKEN must be set (run tests/e2e/95_web.sh)');
	process.exit(1);
}
mkdirSync(OUT, { recursive: true });

/** The API, from the test itself: {status, body} (body parsed when JSON). */
async function rest(method, p, body, token = TOKEN) {
	const headers = { Authorization: `Bearer ${token}` };
	if (body !== undefined)
		headers['Content-Type'] = 'application/json';
	const r = await fetch(MGMT + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
	const text = await r.text();
	let json = null;
	try {
		json = JSON.parse(text);
	} catch { /* not JSON */ }
	return { status: r.status, body: json, text };
}

// ---------------------------------------------------------------------------------------------
// where the page comes from: mgmt itself, or a local static server with an /api/ pass-through

async function mgmtServesPage() {
	try {
		const r = await fetch(`${MGMT}/`);
		const ct = r.headers.get('content-type') || '';
		const body = await r.text();
		if (!(r.ok && ct.startsWith('text/html') && body.includes('app.js')))
			return false;
		const js = await fetch(`${MGMT}/app.js`);
		const jct = js.headers.get('content-type') || '';
		note(`mgmt serves web/: GET / ${r.status} ${ct}; GET /app.js ${js.status} ${jct}`);
		return true;
	} catch {
		return false;
	}
}

function localServer() {
	const up = new URL(MGMT);
	const srv = http.createServer((req, res) => {
		if (req.url.startsWith('/api/')) {
			const p = http.request({ host: up.hostname, port: up.port, method: req.method, path: req.url,
				headers: req.headers }, (pr) => {
				res.writeHead(pr.statusCode, pr.headers);
				pr.pipe(res);
			});
			p.on('error', () => req.socket.destroy()); // as if mgmt's port were closed
			req.pipe(p);
			return;
		}
		serveStatic(WEB, req, res);
	});
	return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}

// ---------------------------------------------------------------------------------------------

const pageErrors = [];   // uncaught exceptions of the page
const scriptErrors = []; // console.error / console.warn from the page's code
const loadErrors = [];   // "Failed to load resource" (HTTP errors and refused connections), with the phase
let phase = 'load';

let server = null;
let base;
if (await mgmtServesPage()) {
	base = `${MGMT}/`;
} else {
	server = await localServer();
	base = `http://127.0.0.1:${server.address().port}/`;
	note(`mgmt does not serve the page at GET / yet: serving ${WEB} from ${base} with /api/ passed to ${MGMT}`);
}

const browser = await launchChromium();
const page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
page.on('pageerror', (e) => pageErrors.push(`${phase}: ${e.message}`));
page.on('console', (m) => {
	if (m.type() !== 'error' && m.type() !== 'warning')
		return;
	const text = m.text();
	if (/^Failed to load resource/.test(text))
		loadErrors.push({ phase, text, url: (m.location() || {}).url || '' });
	else
		scriptErrors.push(`${phase}: ${m.type()}: ${text}`);
});

const conn = () => page.locator('#conn').textContent();
const cell = (table, key, cls) => page.locator(`#${table} tbody tr[data-key="${key}"] td.${cls}`);
const num = async (loc) => {
	const t = await loc.textContent({ timeout: 2000 });
	const digits = (t || '').replace(/[^0-9]/g, '');
	return digits === '' ? NaN : Number(digits);
};
const bannerText = async () => ((await page.locator('#error').isVisible()) ? page.locator('#error-text').textContent() : '');

try {
	// 1. loads, connects, no errors
	await page.goto(base, { waitUntil: 'load' });
	const c0 = await until(async () => ((await conn()).includes('appliance up') ? conn() : null), 8000);
	await sleep(2500); // a few refreshes, the first history and system reads
	const notServed = (e) => /\/api\/v1\/(stats\/history|mirrors)(\?|$)/.test(e.url) && /status of 404/.test(e.text);
	const badLoads = loadErrors.filter((e) => !notServed(e));
	for (const e of loadErrors.filter(notServed))
		note(`route not served yet: ${e.url} (${e.text})`);
	check('page loads, says "appliance up", no exception, no console error (404 of a route not served yet aside)',
		c0 && pageErrors.length === 0 && scriptErrors.length === 0 && badLoads.length === 0,
		`connection line: ${c0}\n` + [...pageErrors, ...scriptErrors, ...badLoads.map((e) => `${e.text} ${e.url}`)].join('\n'));

	// 2. port counters shown increase (ping traffic crosses p0)
	const rx1 = await num(cell('ports', 'p0', 'rx-packets'));
	await sleep(2500);
	const rx2 = await num(cell('ports', 'p0', 'rx-packets'));
	const rate = await cell('ports', 'p0', 'rx-pps').textContent();
	check('port p0: the RX packets shown increase between two reads 2.5 s apart, with an RX rate shown',
		rx2 > rx1 && /pkt\/s/.test(rate), `p0 rx packets ${rx1} -> ${rx2}; rx rate "${rate}"`);

	// microbursts (issue #26): p0's Peak / avg cell is ports[].microburst of /status (a tap: the link's
	// 10 Gb/s; the pings are far below 0.1 % of it)
	{
		const mb = ((((await rest('GET', '/api/v1/status')).body || {}).ports || []).find((p) => p.name === 'p0') || {}).microburst || {};
		const txt = await until(async () => {
			const t = await cell('ports', 'p0', 'burst').textContent();
			return /^RX /.test(t) ? t : null;
		}, 4000);
		const title = (await cell('ports', 'p0', 'burst').getAttribute('title')) || '';
		check('port p0: the Peak / avg cell shows the last second\'s peak and average, RX and TX, of /status ports[].microburst',
			/^RX [0-9.]+ % \/ [0-9.]+ %, TX [0-9.]+ % \/ [0-9.]+ %$/.test(txt || '') && mb.window_us > 0 &&
				title.startsWith(`${mb.window_us} us windows of `) && title.includes(`(${mb.speed_source})`),
			`cell "${txt}", title "${title}"; API ${JSON.stringify(mb)}`);
	}

	// ingress: p0 has a vxlan decap rule (non_tunnel pass): the pings pass as "not a tunnel"
	const nt = async () => {
		const n = await num(cell('ingress', 'p0', 'non-tunnel'));
		return n > 0 ? n : null;
	};
	const ntShown = await until(nt, 8000);
	const stagesText = ntShown ? (await page.locator('#ingress tbody tr[data-key="p0"]').textContent()) : '';
	const ntApi = ((((await rest('GET', '/api/v1/status')).body || {}).ports || [])[0] || {}).workers || {};
	check('ingress table: p0 shows its decap rule and the pings counted as "not a tunnel", as /status says',
		ntShown > 0 && /decap vxlan/.test(stagesText) && ntApi.non_tunnel_passed >= ntShown,
		`shown ${ntShown}, row "${stagesText.trim()}", API non_tunnel_passed ${ntApi.non_tunnel_passed}`);

	// topology: the demo appliance's ports, cross-connect, session 7 (p1 rx -> mirror), p0's vxlan rule
	{
		const topo = await until(async () => {
			const t = await readTopology(page);
			return t.nodes['session:7'] && t.edges['xc:p0>p1'] ? t : null;
		}, 5000) || { nodes: {}, edges: {} };
		const e = topo.edges;
		const want = [['xc:p0>p1', 'port:p0', 'port:p1'], ['xc:p1>p0', 'port:p1', 'port:p0'],
			['src:7:p1', 'port:p1', 'session:7'], ['dst:7', 'session:7', 'port:mirror'], ['decap:p0:0', 'decap:p0:0', 'port:p0']];
		const missing = want.filter(([k, from, to]) => !e[k] || e[k].from !== from || e[k].to !== to).map(([k]) => k);
		check('topology: nodes of ports p0, p1, mirror, session 7 and p0\'s vxlan decap rule; edges p0<->p1, p1 -> session 7 -> mirror, decap -> p0',
			['port:p0', 'port:p1', 'port:mirror', 'session:7', 'decap:p0:0'].every((n) => topo.nodes[n]) && missing.length === 0,
			`nodes ${JSON.stringify(topo.nodes)}\nedges ${JSON.stringify(e)}\nmissing or wrong: ${missing.join(', ')}`);

		// the cross-connect's rate while the ping runs: a rate in pkt/s, above 0, that changes between reads
		const seen = [];
		await until(async () => {
			seen.push(((await readTopology(page)).edges['xc:p0>p1'] || {}).rate);
			await sleep(900);
			return new Set(seen).size >= 2 && seen.length >= 3;
		}, 10000);
		const live = seen.slice(-3);
		const pktRate = (s) => Number((/([\d.]+) (k?)pkt\/s/.exec(s || '') || [])[1]);
		check('topology: the p0 -> p1 edge shows a live rate that changes between reads while the ping runs',
			new Set(seen).size >= 2 && live.every((s) => pktRate(s) > 0 && /bit\/s/.test(s)), `labels read: ${JSON.stringify(seen)}`);

		// port "mirror" set link-down through the API: drawn down, and up again
		const down = await rest('PUT', '/api/v1/ports/mirror/link', { up: false });
		const drawnDown = await until(async () => {
			const t = await readTopology(page);
			return /\bdown\b/.test(t.nodes['port:mirror'] || '') && /\bdown\b/.test((t.edges['dst:7'] || {}).cls || '') ? t : null;
		}, 5000);
		const text = await page.locator('#topology g.node[data-id="port:mirror"]').textContent().catch(() => '');
		const upAgain = await rest('PUT', '/api/v1/ports/mirror/link', { up: true });
		const drawnUp = await until(async () => {
			const t = await readTopology(page);
			return t.nodes['port:mirror'] && !/\bdown\b/.test(t.nodes['port:mirror']) ? t : null;
		}, 5000);
		check('topology: port mirror set link-down by PUT /api/v1/ports/mirror/link is drawn down (node and session 7\'s edge), and up again after',
			down.status === 200 && drawnDown && /link down/.test(text) && upAgain.status === 200 && drawnUp,
			`PUT down ${down.status} ${down.text}; node text "${text}"; PUT up ${upAgain.status}; ` +
			`node class down: ${drawnDown && drawnDown.nodes['port:mirror']}, up: ${drawnUp && drawnUp.nodes['port:mirror']}`);
		await page.locator('#topology').screenshot({ path: path.join(OUT, 'topology.png') }).catch((err) => note(`topology screenshot: ${err.message}`));
	}

	// the live tool group "tools" of the demo (t0, t1; session 8 sends p0's pings to it)
	{
		const gcell = (key, cls) => page.locator(`#groups tbody tr[data-key="${key}"] td.${cls}`).textContent({ timeout: 2000 }).catch(() => '');
		const member = async (p) => ({ state: await gcell(`m:tools:${p}`, 'state'), buckets: await gcell(`m:tools:${p}`, 'buckets') });
		const shown = await until(async () => {
			const g = { group: await gcell('g:tools', 'state'), t0: await member('t0'), t1: await member('t1'),
				packets: await num(page.locator('#groups tbody tr[data-key="g:tools"] td.packets')) };
			return g.group === '2 of 2 up' && g.t0.state === 'up' && g.t1.state === 'up' && g.packets > 0 ? g : null;
		}, 10000);
		const topo = await until(async () => {
			const t = await readTopology(page);
			return t.nodes['group:tools'] && t.edges['dst:8'] ? t : null;
		}, 5000) || { nodes: {}, edges: {} };
		const e = topo.edges;
		check('tool group "tools" of the live appliance: the table shows it "2 of 2 up", members t0 and t1 up, copies of p0\'s pings counted; the drawing has session 8 -> group -> t0, t1',
			shown && shown.t0.buckets !== '' && ['group:tools', 'member:tools:t0', 'member:tools:t1', 'session:8'].every((n) => topo.nodes[n]) &&
			(e['dst:8'] || {}).to === 'group:tools' && (e['member:tools:t0'] || {}).from === 'group:tools' && (e['member:tools:t1'] || {}).to === 'member:tools:t1',
			`table ${JSON.stringify(shown)}\nnodes ${JSON.stringify(topo.nodes)}\nedges ${JSON.stringify(e)}`);

		// member t1's link down through the API: shown down with no bucket, t0 holds all 4096; then up again
		const down = await rest('PUT', '/api/v1/ports/t1/link', { up: false });
		const wentDown = await until(async () => {
			const t1 = await member('t1'), t0 = await member('t0');
			const t = await readTopology(page);
			return t1.state === 'down' && t1.buckets === '0' && t0.buckets === '4,096' && /\bdown\b/.test(t.nodes['member:tools:t1'] || '') ? { t0, t1 } : null;
		}, 5000);
		const upAgain = await rest('PUT', '/api/v1/ports/t1/link', { up: true });
		const back = await until(async () => {
			const t1 = await member('t1');
			const t = await readTopology(page);
			return t1.state === 'up' && t1.buckets !== '0' && !/\bdown\b/.test(t.nodes['member:tools:t1'] || 'down') ? t1 : null;
		}, 8000);
		check('tool group "tools": member t1 set link-down by PUT /api/v1/ports/t1/link is shown down with 0 buckets (t0 4,096) and drawn down; after link up and the 500 ms hold-down it is up with its buckets again',
			down.status === 200 && wentDown && upAgain.status === 200 && back,
			`PUT down ${down.status} ${down.text}; down ${JSON.stringify(wentDown)}; PUT up ${upAgain.status}; back ${JSON.stringify(back)}`);
	}

	// cycles per packet over a window: at ping rates (10 a second) too few frames to mean anything
	const cpp = async () => {
		const out = [];
		for (const id of ['0', '1']) {
			const c = cell('workers', id, 'cpp');
			out.push({ id, text: (await c.textContent({ timeout: 2000 })).trim(), title: (await c.getAttribute('title')) || '' });
		}
		return out.every((x) => /over the last/.test(x.title)) ? out : null;
	};
	const cppShown = (await until(cpp, 12000)) || [];
	const cppApi = (await rest('GET', '/api/v1/workers')).body || [];
	check('workers at ping rates: the Cycles / packet cell shows a dash with its window and frames in the title, and the API says null',
		cppShown.length === 2 && cppShown.every((x) => x.text === '\u2014' && /frames \(fewer than 1000/.test(x.title)) &&
			cppApi.length === 2 && cppApi.every((w) => w.cycles_per_packet === null && w.cycles_per_packet_frames < 1000),
		`cells: ${JSON.stringify(cppShown)}; API: ${JSON.stringify(cppApi.map((w) => [w.id, w.cycles_per_packet, w.cycles_per_packet_window_s, w.cycles_per_packet_frames]))}`);

	// the pools table: each pool, and below it its indirect-mbuf pool, with the API's size
	{
		const pools = (await rest('GET', '/api/v1/pools')).body || [];
		const ind = pools[0] && pools[0].indirect;
		const rowText = ind ? await page.locator(`#pools tbody tr[data-key="${ind.name}"]`).textContent({ timeout: 5000 }).catch(() => '') : '';
		check('pools table: a row of the indirect-mbuf pool (GET /api/v1/pools[0].indirect) with its size',
			!!ind && rowText.includes(ind.name) && rowText.replace(/[^0-9]/g, '').includes(String(ind.size)),
			`indirect ${JSON.stringify(ind && { name: ind.name, size: ind.size })}; row "${rowText}"`);
	}

	// chart, or the words that say there is no history
	const hist = await rest('GET', `/api/v1/stats/history?metric=rx_bytes&port=p0&from=${Math.floor(Date.now() / 1000) - 3600}&to=${Math.floor(Date.now() / 1000)}&step=10`);
	if (hist.status === 404) {
		const t = await page.locator('#chart-note').textContent();
		check('throughput chart: /api/v1/stats/history answers 404, the page says "history not available"',
			/history not available/.test(t), `note: ${t}`);
	} else {
		const ok = await until(async () => (await page.locator('#charts figure[data-port="p0"] svg path.line.rx').getAttribute('d')) !== '' &&
			/bit\/s/.test(await page.locator('#charts figure[data-port="p0"] svg').textContent()), 12000);
		check('throughput chart of p0: an rx line drawn, axes labelled in bit/s and time',
			ok, `history answered ${hist.status}: ${hist.text.slice(0, 200)}`);
		// this instance started within the hour: GET /events?kind=appliance_start has it, the chart marks it
		const starts = (await rest('GET', '/api/v1/events?kind=appliance_start&limit=100')).body || [];
		const hourAgo = Date.now() - 3600e3;
		const want = starts.filter((e) => Date.parse(e.time) >= hourAgo).map((e) => Date.parse(e.time));
		const got = await until(async () => {
			const m = await page.locator('#charts figure[data-port="p0"] svg g.start').evaluateAll((gs) => gs.map((g) => Number(g.dataset.t)));
			return m.length > 0 ? m : null;
		}, 12000) || [];
		check('throughput chart of p0: a dashed line at each appliance start of the hour (GET /events?kind=appliance_start: only that kind, this start among them)',
			Array.isArray(starts) && starts.length > 0 && starts.every((e) => e.kind === 'appliance_start') && want.length > 0 &&
			want.every((t) => got.includes(t)), `starts ${JSON.stringify(starts.map((e) => [e.kind, e.time]))}; marks ${JSON.stringify(got)}`);
	}

	// hot standbys (issue 16): a row per standby slot in the workers table, as /api/v1/standbys says
	const sbApi = (await rest('GET', '/api/v1/standbys')).body || [];
	const sbRow = async () => {
		const t = await page.locator('#workers tbody tr[data-key="standby-0"]').textContent({ timeout: 2000 }).catch(() => '');
		return /standby 0/.test(t) && /parked/.test(t) ? t : null;
	};
	const sbShown = sbApi.length ? await until(sbRow, 10000) : null;
	check('workers table: a row "standby 0", parked, with its pid and lcore, as GET /api/v1/standbys says',
		sbApi.length === 1 && sbShown && sbShown.includes(String(sbApi[0].lcore)) && /parked/.test(sbShown),
		`API ${JSON.stringify(sbApi)}; row "${(sbShown || '').trim()}"`);

	// 3. the token, then restart worker 0 by clicking
	await page.fill('#token', TOKEN);
	await page.click('#token-form button[type=submit]');
	const tokenInPage = await page.content();
	check('token: kept for the tab, not in the page source, field cleared',
		(await page.evaluate(() => sessionStorage.getItem('spanbox.token'))) === TOKEN &&
		!tokenInPage.includes(TOKEN) && (await page.inputValue('#token')) === '');
	const before = await num(cell('workers', '0', 'restarts'));
	const apiBefore = (await rest('GET', '/api/v1/workers/0')).body;
	phase = 'restart';
	await page.click('button[aria-label="Restart worker 0"]');
	const after = await until(async () => {
		const n = await num(cell('workers', '0', 'restarts'));
		return n > before ? n : null;
	}, 15000);
	const apiAfter = (await rest('GET', '/api/v1/workers/0')).body;
	check('clicking "Restart" of worker 0: the restarts shown go up, as in GET /api/v1/workers/0',
		after > before && apiAfter && apiAfter.restarts === after && apiAfter.restarts === apiBefore.restarts + 1,
		`shown ${before} -> ${after}; API ${apiBefore && apiBefore.restarts} -> ${apiAfter && apiAfter.restarts}; banner: ${await bannerText()}`);

	// 4. add a mirror session through the form
	phase = 'mirror';
	const ID = 42;
	await rest('DELETE', `/api/v1/mirrors/${ID}`); // in case a previous run left it
	const fillForm = async (id) => {
		await page.fill('#m-id', String(id));
		await page.fill('#m-name', 'webtest');
		await page.selectOption('#m-src', 'p0');
		await page.selectOption('#m-dir', 'rx');
		await page.selectOption('#m-dst', 'mirror');
		await page.selectOption('#m-encap', 'erspan2');
		await page.fill('#m-srcip', '192.0.2.1');
		await page.fill('#m-dstip', '192.0.2.2');
		await page.fill('#m-dstmac', '02:00:00:00:00:02');
		await page.fill('#m-filter', 'icmp');
		await page.click('#mirror-form button[type=submit]');
	};
	await fillForm(ID);
	const row = await until(async () => (await page.locator(`#mirrors tbody tr[data-key="${ID}"]`).count()) === 1, 5000);
	const listed = await rest('GET', '/api/v1/mirrors');
	const m = Array.isArray(listed.body) ? listed.body.find((x) => x.id === ID) : null;
	check(`adding mirror session ${ID} through the form: it appears in the page's list and in GET /api/v1/mirrors with the form's values`,
		row && m && m.name === 'webtest' && m.sources && m.sources[0].port === 'p0' && m.sources[0].direction === 'rx' &&
		m.destination.port === 'mirror' && m.encap.type === 'erspan2' && m.encap.dst_ip === '192.0.2.2' && m.filter === 'icmp',
		`row in page: ${!!row}; GET /api/v1/mirrors ${listed.status}: ${listed.text.slice(0, 300)}; banner: ${await bannerText()}`);

	// 5. API errors in words: a duplicate id, a wrong token
	phase = 'errors';
	const countBefore = Array.isArray(listed.body) ? listed.body.length : -1;
	await fillForm(ID);
	const dup = await until(async () => {
		const t = await bannerText();
		return t ? t : null;
	}, 5000);
	const dupApi = await rest('POST', '/api/v1/mirrors', { id: ID, sources: [{ port: 'p0' }], destination: { port: 'mirror' } });
	const listed2 = await rest('GET', '/api/v1/mirrors');
	check('adding the same id again: the banner shows 409 and the API\'s message in words, the list is unchanged',
		dup && dupApi.status === 409 && dup.includes('409') && dupApi.body && dup.includes(dupApi.body.error.message) &&
		Array.isArray(listed2.body) && listed2.body.length === countBefore,
		`banner: ${dup}; the same POST from the test: ${dupApi.status} ${dupApi.text}`);
	await page.click('#error-close');

	await page.evaluate(() => sessionStorage.setItem('spanbox.token', 'not-the-token-0000000000'));
	const w1 = (await rest('GET', '/api/v1/workers/1')).body;
	await page.click('button[aria-label="Restart worker 1"]');
	const bad = await until(async () => {
		const t = await bannerText();
		return t ? t : null;
	}, 5000);
	await sleep(1500);
	const w1after = (await rest('GET', '/api/v1/workers/1')).body;
	check('restart with a wrong token: the banner shows 401 and the message in words; worker 1 not restarted',
		bad && /401/.test(bad) && w1after.restarts === w1.restarts && w1after.pid === w1.pid,
		`banner: ${bad}; worker 1 restarts ${w1.restarts} -> ${w1after.restarts}, pid ${w1.pid} -> ${w1after.pid}`);
	await page.click('#error-close').catch(() => {});
	await page.evaluate((t) => sessionStorage.setItem('spanbox.token', t), TOKEN);

	// screenshot of the live page
	phase = 'screenshot';
	const shot = path.join(OUT, 'page.png');
	await page.screenshot({ path: shot, fullPage: true });
	let size = 0;
	try {
		size = statSync(shot).size;
	} catch { /* missing */ }
	check(`screenshot written: ${path.relative(ROOT, shot)} (${size} bytes)`, size > 20000);

	// 6. delete the session
	phase = 'delete';
	const delBtn = page.locator(`button[aria-label="Delete mirror session ${ID}"]`);
	let gone = false;
	if (await delBtn.count()) {
		await delBtn.click();
		gone = await until(async () => (await page.locator(`#mirrors tbody tr[data-key="${ID}"]`).count()) === 0, 5000);
	}
	const listed3 = await rest('GET', '/api/v1/mirrors');
	check(`deleting mirror session ${ID} by its button: gone from the page and from GET /api/v1/mirrors`,
		gone && listed3.status === 200 && Array.isArray(listed3.body) && !listed3.body.some((x) => x.id === ID),
		`GET /api/v1/mirrors ${listed3.status}: ${listed3.text.slice(0, 200)}; banner: ${await bannerText()}`);

	// 6b. the database locked by another process: the page warns in words, and the warning goes
	// once the lock is released (history sampling marks the database not writable, then writable)
	{
		const dbPath = (await rest('GET', '/api/v1/status')).body?.database?.path;
		const warns = async () => (await page.locator('#warnings').innerText()).toLowerCase();
		const locker = spawn('python3', ['-c',
			'import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); '
			+ 'c.execute("BEGIN EXCLUSIVE"); time.sleep(6); c.execute("ROLLBACK")', dbPath], { stdio: 'ignore' });
		const shown = await until(async () => ((await warns()).includes('not writable') ? true : null), 5000);
		await new Promise((resolve) => locker.on('exit', resolve));
		const cleared = await until(async () => ((await warns()).includes('not writable') ? null : true), 6000);
		check('database locked by another process: the page warns "not writable" in words, and the warning goes when the lock does',
			dbPath && shown && cleared, `database ${dbPath}; warnings now: ${await warns()}`);
	}

	// 7. mgmt stopped: "appliance unreachable", no exception; then back
	if (process.env.SBX_MGMT_STOP && process.env.SBX_MGMT_START) {
		phase = 'mgmt-down';
		const errsBefore = pageErrors.length + scriptErrors.length;
		execFileSync('bash', [process.env.SBX_MGMT_STOP], { stdio: 'inherit' });
		const down = await until(async () => ((await conn()).includes('appliance unreachable') ? conn() : null), 6000);
		await sleep(2500); // a few failed refreshes
		await page.screenshot({ path: path.join(OUT, 'page-unreachable.png') });
		check('mgmt stopped: the page says "appliance unreachable", no exception or console error from the page',
			down && (await conn()).includes('appliance unreachable') && pageErrors.length + scriptErrors.length === errsBefore,
			`connection line: ${await conn()}\n${[...pageErrors, ...scriptErrors].slice(errsBefore).join('\n')}`);
		phase = 'mgmt-back';
		execFileSync('bash', [process.env.SBX_MGMT_START], { stdio: 'inherit' });
		const back = await until(async () => ((await conn()).includes('appliance up') ? conn() : null), 15000);
		const r1 = await num(cell('ports', 'p0', 'rx-packets'));
		await sleep(2500);
		const r2 = await num(cell('ports', 'p0', 'rx-packets'));
		check('mgmt started again: the page says "appliance up" by itself and its counters move again',
			back && r2 > r1, `connection line: ${back}; p0 rx ${r1} -> ${r2}`);
	}

	// 8. primary stopped (mgmt up): "appliance down"; then back
	if (process.env.SBX_PRIMARY_STOP && process.env.SBX_PRIMARY_START) {
		phase = 'appliance-down';
		const errsBefore = pageErrors.length + scriptErrors.length;
		execFileSync('bash', [process.env.SBX_PRIMARY_STOP], { stdio: 'inherit' });
		const down = await until(async () => ((await conn()).includes('appliance down') ? conn() : null), 8000);
		await sleep(2000);
		check('primary stopped, mgmt up: the page says "appliance down", no exception or console error from the page',
			down && (await conn()).includes('appliance down') && pageErrors.length + scriptErrors.length === errsBefore,
			`connection line: ${await conn()}\n${[...pageErrors, ...scriptErrors].slice(errsBefore).join('\n')}`);
		phase = 'appliance-back';
		execFileSync('bash', [process.env.SBX_PRIMARY_START], { stdio: 'inherit' });
		const back = await until(async () => ((await conn()).includes('appliance up') ? conn() : null), 20000);
		const r1 = await num(cell('ports', 'p0', 'rx-packets'));
		await sleep(2500);
		const r2 = await num(cell('ports', 'p0', 'rx-packets'));
		check('primary started again: the page says "appliance up" by itself and p0\'s counters move again',
			back && r2 > r1, `connection line: ${back}; p0 rx ${r1} -> ${r2}`);
	}

	check('over the whole run: no uncaught exception and no console error from the page\'s code',
		pageErrors.length === 0 && scriptErrors.length === 0, [...pageErrors, ...scriptErrors].join('\n'));
	const byPhase = {};
	for (const e of loadErrors)
		byPhase[e.phase] = (byPhase[e.phase] || 0) + 1;
	note(`failed resource loads by phase (HTTP errors of the API, refused connections): ${JSON.stringify(byPhase)}`);
} catch (e) {
	check(`the test ran to its end (${e.message.split('\n')[0]})`, false, e.stack);
} finally {
	await browser.close().catch(() => {});
	if (server)
		server.close();
}
process.exit(failed() ? 1 : 0);
