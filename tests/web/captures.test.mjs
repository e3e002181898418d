// Browser test of the status page's Captures section (web/captures.js, docs/CAPTURE.md) in
// Debian's headless Chromium driven by playwright-core. Started by tests/e2e/78_capture_web.sh,
// which provides an instance whose port in0 replays a pcap (held until SBX_PAUSE is removed).
// Prints TAP lines; exit 0 when all passed.
// Environment: SBX_MGMT_URL (e.g. http://127.0.0.1:18374), SBX_TOKEN, SBX_PAUSE (file to remove
// once the capture runs), SBX_FRAMES (frames of the input).
import { unlinkSync } from 'node:fs';
import { check, failed, launchChromium, until } from './lib.mjs';

const MGMT = process.env.SBX_MGMT_URL;
const TOKEN = process.env.SBX_TOKEN;
const FRAMES = Number(process.env.SBX_FRAMES || 0);
const errors = [];
const browser = await launchChromium();
try {
	const page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
	page.on('pageerror', (e) => errors.push(e.message));
	await page.goto(`${MGMT}/`, { waitUntil: 'load' });
	await page.fill('#token', TOKEN);
	await page.click('#token-form button[type=submit]');
	const ports = await until(async () => {
		const o = await page.locator('#c-port option').allTextContents();
		return o.length ? o : null;
	}, 8000);
	check('the capture form offers the ports', JSON.stringify(ports) === JSON.stringify(['in0', 'null1']), ports);
	check('no capture yet: the table says none', await page.locator('#captures-empty').isVisible());

	await page.selectOption('#c-port', 'in0');
	await page.selectOption('#c-dir', 'rx');
	await page.fill('#c-filter', 'ip or not ip');
	await page.fill('#c-stop', String(FRAMES));
	await page.selectOption('#c-stop-kind', 'packets');
	await page.click('#capture-form button[type=submit]');
	const row = page.locator('#captures tbody tr').first();
	const state0 = await until(async () => ((await row.count()) ? row.locator('td').nth(2).textContent() : null), 8000);
	check('started from the page: a row, running', state0 === 'running', state0);
	unlinkSync(process.env.SBX_PAUSE);
	const ended = await until(async () => {
		const t = await row.locator('td').nth(2).textContent();
		return t.startsWith('ended') ? t : null;
	}, 30000);
	check('it ends on its stop condition and says so', ended === 'ended: stop.packets', ended);
	const link = row.locator('td').nth(5).locator('a').first();
	const href = await until(async () => ((await link.count()) ? link.getAttribute('href') : null), 5000);
	check('its file is offered for download', href === '/api/v1/captures/1/files/1', href);
	const r = await fetch(`${MGMT}${href}`);
	const body = Buffer.from(await r.arrayBuffer());
	check('the link downloads a pcapng file', r.status === 200 && body.readUInt32LE(0) === 0x0a0d0d0a,
		`${r.status} ${body.length} B`);
	const captured = await row.locator('td').nth(3).textContent();
	check(`the row counts the ${FRAMES} frames captured`, captured.startsWith(`${FRAMES} pkts`), captured);
	await row.locator('button').click();
	const gone = await until(async () => ((await page.locator('#captures tbody tr').count()) === 0 ? 1 : null), 15000);
	check('Delete removes the capture from the table', gone === 1);
	check('no script error on the page', errors.length === 0, errors.join('\n'));
} catch (e) {
	check(`the browser test ran to its end (${e.message})`, false);
}
await browser.close();
process.exit(failed() ? 1 : 0);
