// Browser test of how the status page shows supervision (issue #24 items 3 and 11) against canned
// API answers: worker 1 failed (crash_limit) with its queues p0/1 and p1/1, worker 0 running but
// starved (not scheduled), /health degraded. The banner must turn red and name worker 1 and the
// queues nobody polls; the workers table must mark worker 1 failed (red) and worker 0 not
// scheduled. Then worker 1 runs again: the banner goes back to "appliance up". Started by
// tests/e2e/95w_web_workers.sh; TAP lines; exit 0 when all passed.
//
// Environment: SBX_WEB (the page, default web/).
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, failed, launchChromium, note, serveStatic, sleep, until } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const WEB = process.env.SBX_WEB || path.join(here, '../../web');
const canned = { failed: true };

function worker(id, state, extra = {}) {
	return { id, pid: state === 'failed' ? 0 : 100 + id, lcore: 2 + id, state, restarts: 0, crashes: 0, hangs: 0,
		starvations: 0, starved: false, start_time: new Date().toISOString(), heartbeat_age_ms: 0,
		queues: [{ port: 'p0', queue: id }, { port: 'p1', queue: id }], ports: {}, ...extra };
}
function status() {
	return { appliance: { state: 'up', primary_pid: 1, uptime_s: 10, file_prefix: 'wbw', tsc_hz: 1e9 },
		ports: [], mirrors: [], pools: [], warnings: [], standbys: [],
		workers: [worker(0, 'running', { starved: true, starvations: 1, heartbeat_age_ms: 900 }),
			worker(1, canned.failed ? 'failed' : 'running', { crashes: canned.failed ? 3 : 0 })],
		database: { path: '/tmp/wbw.db', size_bytes: 0, schema_version: 4, writable: true } };
}
function health() {
	const problems = canned.failed ? [{ kind: 'worker', worker: 1, message: 'worker 1 failed: ...',
		queues: [{ port: 'p0', queue: 1 }, { port: 'p1', queue: 1 }] }] : [];
	return { status: problems.length ? 'degraded' : 'ok', appliance: 'up', version: 'canned', uptime_s: 10, problems };
}
function answer(req, res) {
	const json = (code, body) => res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
		.end(JSON.stringify(body));
	switch (new URL(req.url, 'http://x').pathname) {
	case '/api/v1/health': return json(200, health());
	case '/api/v1/status': return json(200, status());
	case '/api/v1/mirrors': case '/api/v1/events': return json(200, []);
	case '/api/v1/system': return json(200, { warnings: [], ports: [] });
	default: return json(404, { error: { code: 404, message: 'no route' } });
	}
}

const server = http.createServer((req, res) => (req.url.startsWith('/api/') ? answer(req, res) : serveStatic(WEB, req, res)));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}/`;
note(`serving ${WEB} and canned /api/v1 answers at ${base}`);
const browser = await launchChromium();
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const errors = [];
page.on('pageerror', (e) => errors.push(`exception: ${e.message}`));
const stateCell = (id) => page.locator(`#workers tbody tr[data-key="${id}"] td.state`);
try {
	await page.goto(base, { waitUntil: 'load' });
	const conn = await until(async () => {
		const c = { text: await page.locator('#conn').textContent(), cls: await page.locator('#conn').getAttribute('class') };
		return /failed/.test(c.text) ? c : null;
	}, 8000) || {};
	check('banner: red (conn-failed) and names worker 1 failed and the queues nobody polls (p0/1, p1/1)',
		/\bconn-failed\b/.test(conn.cls) && /worker 1 failed: nobody polls p0\/1, p1\/1/.test(conn.text) &&
		/1 problem/.test(conn.text), JSON.stringify(conn));
	const w1 = { text: await stateCell(1).textContent(), cls: await stateCell(1).getAttribute('class') };
	const w0 = { text: await stateCell(0).textContent(), cls: await stateCell(0).getAttribute('class'),
		title: await stateCell(0).getAttribute('title') };
	check('workers table: worker 1 "failed" (state-failed, red); worker 0 "running · not scheduled" (state-starved) with its starvations',
		w1.text === 'failed' && /\bstate-failed\b/.test(w1.cls) && w0.text === 'running · not scheduled' &&
		/\bstate-starved\b/.test(w0.cls) && /starvations 1/.test(w0.title), JSON.stringify({ w0, w1 }));
	canned.failed = false;
	const up = await until(async () => /conn-up/.test(await page.locator('#conn').getAttribute('class')), 5000);
	check('worker 1 revived, /health ok: the banner is "appliance up" again (conn-up)', up,
		await page.locator('#conn').textContent());
	await sleep(200);
	check('no exception from the page', errors.length === 0, errors.join('\n'));
} catch (err) {
	check(`the test ran to its end (${err.message.split('\n')[0]})`, false, err.stack);
} finally {
	await browser.close().catch(() => {});
	server.close();
}
process.exit(failed() ? 1 : 0);
