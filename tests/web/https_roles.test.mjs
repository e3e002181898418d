// The status page over HTTPS with roles (issue 17), in Debian's headless Chromium driven by
// playwright-core. Started by tests/e2e/55c_https_roles.sh, which provides an instance serving
// HTTPS only on an address other than 127.0.0.1 (so that reads need a token).
// Chromium trusts exactly the test's self-signed certificate: --ignore-certificate-errors-spki-list
// pins the hash of its public key (any other certificate still fails), not ignoreHTTPSErrors.
// Prints TAP lines; exit 0 when all passed.
//
// Environment (all required):
//   SBX_MGMT_URL      https://127.0.0.2:PORT
//   SBX_SPKI          base64 SHA-256 of the certificate's SubjectPublicKeyInfo
//   SBX_VIEWER_TOKEN  the viewer token
//   SBX_ADMIN_TOKEN   the admin token
import { chromium } from 'playwright-core';

const { SBX_MGMT_URL: MGMT, SBX_SPKI: SPKI, SBX_VIEWER_TOKEN: VIEWER, SBX_ADMIN_TOKEN: ADMIN } = process.env;
if (!MGMT || !SPKI || !VIEWER || !ADMIN) {
	console.log('not ok - SBX_MGMT_URL, SBX_SPKI, SBX_VIEWER_TOKEN and SBX_ADMIN_TOKEN must be set (tests/e2e/55c_https_roles.sh)');
	process.exit(1);
}
let failed = 0;
function check(desc, cond, detail) {
	console.log(`${cond ? 'ok' : 'not ok'} - ${desc}`);
	if (!cond)
		failed++;
	if (detail)
		console.log(`# ${String(detail).replace(/\n/g, '\n# ')}`);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(fn, ms) {
	const end = Date.now() + ms;
	for (;;) {
		const v = await fn().catch(() => undefined);
		if (v || Date.now() >= end)
			return v;
		await sleep(200);
	}
}

const browser = await chromium.launch({
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
		'--disable-component-update', '--disable-sync', `--ignore-certificate-errors-spki-list=${SPKI}`],
});
try {
	const page = await browser.newPage(); // ignoreHTTPSErrors stays false
	const logs = [];
	page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`));
	page.on('console', (m) => logs.push(`console ${m.type()}: ${m.text()}`));
	page.on('requestfailed', (r) => logs.push(`request failed: ${r.url()}: ${(r.failure() || {}).errorText}`));
	process.on('exit', () => logs.length && console.log(`# ${logs.slice(0, 30).join('\n# ')}`));
	const res = await page.goto(`${MGMT}/`, { waitUntil: 'load', timeout: 15000 });
	check('the page loads over HTTPS with the pinned self-signed certificate', res && res.status() === 200,
		`status ${res && res.status()}, url ${page.url()}`);
	const conn = () => page.locator('#conn').getAttribute('class');
	await page.fill('#token', VIEWER);
	await page.click('#token-form button[type=submit]');
	const up = await until(async () => /conn-(up|degraded)/.test(await conn()) && (await page.locator('#workers tbody tr').count()) > 0, 10000);
	check('with the viewer token typed, the page reads the status (connected, workers listed)', up,
		`#conn: ${await conn()} "${await page.locator('#conn').textContent()}"`);
	const r = await page.evaluate(async ([v]) => {
		const h = { Authorization: `Bearer ${v}` };
		const s = await fetch('/api/v1/status', { headers: h });
		const w = await fetch('/api/v1/workers/0/restart', { method: 'POST', headers: h });
		return { status: s.status, write: w.status, body: await w.json().catch(() => null) };
	}, [VIEWER]);
	check('in the page, GET /api/v1/status with the viewer token: 200', r.status === 200, JSON.stringify(r));
	check('in the page, POST /api/v1/workers/0/restart with the viewer token: 403 JSON error',
		r.write === 403 && r.body && r.body.error && r.body.error.code === 403, JSON.stringify(r));
	await page.click('button[aria-label="Restart worker 0"]');
	const banner = await until(async () => ((await page.locator('#error').isVisible()) ? page.locator('#error-text').textContent() : null), 5000);
	check('clicking "Restart" with the viewer token: the banner shows 403', banner && /403/.test(banner), `banner: ${banner}`);
} catch (e) {
	check(`no exception: ${e.message}`, false);
} finally {
	await browser.close();
}
process.exit(failed ? 1 : 0);
