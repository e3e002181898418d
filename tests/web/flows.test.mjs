// Browser test of the status page's "Top talkers" section (web/flows.js, issue #28) in Debian's
// headless Chromium driven by playwright-core, against a running appliance with flows metered on a
// veth (tests/e2e/95f_web_flows.sh). Prints TAP lines; exit 0 when all passed.
// Environment: SBX_MGMT_URL (e.g. http://127.0.0.1:19020), SBX_SEND (a script: `SBX_SEND N` sends
// batch N of tests/lib/web_flows_send.py and prints its flows as JSON), SBX_OUT (screenshots).
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { check, failed, launchChromium, note, until } from './lib.mjs';

const MGMT = process.env.SBX_MGMT_URL;
const OUT = process.env.SBX_OUT || 'out/tests/web';
const errors = [];
const PROTO = { 6: 'TCP', 17: 'UDP' };
const fmt = (n) => n.toLocaleString('en-US');

/** The flows batch @p n sent (tests/lib/web_flows_send.py's JSON). */
const send = (n) => JSON.parse(execFileSync(process.env.SBX_SEND, [String(n)], { encoding: 'utf8' }));

/** A flow as the test compares rows: "src:port > dst:port PROTO vlan packets bytes". */
const want = (f) => `${f.src}:${f.sport} > ${f.dst}:${f.dport} ${PROTO[f.proto]} ${f.vlan || '—'} p0 ${fmt(f.packets)} ${fmt(f.bytes)}`;

/** The rows of the table #flows whose source is one of the test's (10.28.0.0/16), as want() writes them. */
const rows = (page) => page.evaluate(() => [...document.querySelectorAll('#flows tbody tr')].map((tr) => {
	const c = (k) => (tr.querySelector(`.${k}`) || {}).textContent || '?';
	return `${c('src')} > ${c('dst')} ${c('proto')} ${c('vlan')} ${c('port')} ${c('packets')} ${c('bytes')}`;
}).filter((r) => r.startsWith('10.28.')));

const emptyText = (page) => page.evaluate(() => {
	const e = document.getElementById('flows-empty');
	return e && !e.hidden ? e.textContent : '';
});

/** Wait until the test's rows are @p exp (an array of want() strings); returns the last rows read. */
async function rowsBecome(page, exp, ms) {
	let last = [];
	await until(async () => {
		last = await rows(page);
		return JSON.stringify(last) === JSON.stringify(exp);
	}, ms);
	return last;
}

const browser = await launchChromium();
try {
	const page = await browser.newPage({ viewport: { width: 1400, height: 1400 } });
	page.on('pageerror', (e) => errors.push(e.message));
	await page.goto(`${MGMT}/`, { waitUntil: 'load' });

	// nothing metered yet
	const textWith = async (s) => { const t = await emptyText(page); return t.includes(s) ? t : null; };
	const none = await until(() => textWith('no flow'), 10000);
	check('flows on, nothing ended yet: the section says so', !!none, none);
	check('... and its table has no row', (await page.locator('#flows tbody tr').count()) === 0,
		(await page.locator('#flows tbody tr').allTextContents()).join('\n'));

	// metering off (GET /flows says enabled false): the page says it is off
	await page.route('**/api/v1/flows', (r) => r.fulfill({ status: 200, contentType: 'application/json',
		body: JSON.stringify({ enabled: false, ports: [], collectors: [], workers: [] }) }));
	const off = await until(() => textWith('off'), 5000);
	check('flows off: the section says metering is off', !!off, off || await emptyText(page));
	await page.unroute('**/api/v1/flows');

	await page.evaluate(() => { window.sbxNoReload = 1; });
	const b1 = send(1);
	const byBytes = [...b1].sort((a, b) => b.bytes - a.bytes).map(want);
	const byPackets = [...b1].sort((a, b) => b.packets - a.packets).map(want);
	note(`batch 1: by bytes ${byBytes.join(' | ')}`);
	let got = await rowsBecome(page, byBytes, 20000);
	check('batch 1 ended: the table lists its 4 flows by bytes, largest first (the default)',
		JSON.stringify(got) === JSON.stringify(byBytes), got.join('\n'));
	check('... as the top 4 rows, under the 20 rows at most',
		(await page.locator('#flows tbody tr').count()) >= 4 && (await page.locator('#flows tbody tr').count()) <= 20 &&
		(await page.locator('#flows tbody tr:nth-child(-n+4) .src').allTextContents()).every((s) => s.startsWith('10.28.')));
	const big = page.locator('#flows tbody tr').first();
	const rate = await big.locator('.rate').textContent();
	check('the largest row has an average rate in bit/s', /bit\/s$/.test(rate), rate);
	const empty = await emptyText(page);
	check('the empty-state text is hidden while flows are listed', empty === '', empty);

	await page.click('#flows-by-packets');
	got = await rowsBecome(page, byPackets, 5000);
	check('switched to by packets: the same flows, most packets first',
		JSON.stringify(got) === JSON.stringify(byPackets), got.join('\n'));
	check('the two orders differ', JSON.stringify(byBytes) !== JSON.stringify(byPackets));

	// a later flow appears without a reload (the refresh loop)
	const b2 = send(2);
	got = await rowsBecome(page, [want(b2[0]), ...byPackets], 20000);
	check('a new flow appears at the top by packets without a reload',
		JSON.stringify(got) === JSON.stringify([want(b2[0]), ...byPackets]), got.join('\n'));
	check('... the page was not reloaded', await page.evaluate(() => window.sbxNoReload === 1));
	await page.click('#flows-by-bytes');
	got = await rowsBecome(page, [want(b2[0]), ...byBytes], 5000);
	check('by bytes again: the new flow first, then batch 1 by bytes',
		JSON.stringify(got) === JSON.stringify([want(b2[0]), ...byBytes]), got.join('\n'));
	mkdirSync(OUT, { recursive: true });
	await page.locator('#flows-section').screenshot({ path: `${OUT}/flows.png` });
	check('no script error on the page', errors.length === 0, errors.join('\n'));
} catch (e) {
	check(`the browser test ran to its end (${e.message})`, false);
}
await browser.close();
process.exit(failed() ? 1 : 0);
