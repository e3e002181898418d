// Helpers of the browser tests (page.test.mjs, groups.test.mjs, captures.test.mjs): TAP lines, polling, the static
// files of web/, and Debian's headless Chromium.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

let failures = 0;

/** Print "ok - DESC" or "not ok - DESC" (and DETAIL as "# " comments); returns !!cond. */
export function check(desc, cond, detail) {
	if (cond) {
		console.log(`ok - ${desc}`);
	} else {
		failures++;
		console.log(`not ok - ${desc}`);
	}
	if (detail)
		console.log(`# ${String(detail).replace(/\n/g, '\n# ')}`);
	return !!cond;
}

/** How many checks failed so far. */
export const failed = () => failures;

export const note = (s) => console.log(`# ${s}`);
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Poll fn() every 200 ms until it returns a truthy value or @p ms pass; returns the last value. */
export async function until(fn, ms) {
	const end = Date.now() + ms;
	let v;
	for (;;) {
		try {
			v = await fn();
		} catch {
			v = undefined;
		}
		if (v || Date.now() >= end)
			return v;
		await sleep(200);
	}
}

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
	'.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png' };

/** Answer @p req with the file of folder @p web it names ("/" is index.html); 403 outside, 404 missing. */
export function serveStatic(web, req, res) {
	const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
	const file = path.join(web, rel === '/' ? 'index.html' : rel);
	if (!file.startsWith(web + path.sep)) {
		res.writeHead(403).end();
		return;
	}
	try {
		const data = readFileSync(file);
		res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream',
			'Cache-Control': 'no-store' });
		res.end(data);
	} catch {
		res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
	}
}

/** Headless Chromium ($CHROMIUM, default /usr/bin/chromium), nothing fetched from outside. */
export function launchChromium() {
	return chromium.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
			'--disable-component-update', '--disable-sync'],
	});
}

/**
 * The topology drawing's test view, read in the page: nodes {id: className} and edges
 * {key: {cls, from, to, rate}} of svg#topology (web/topology.js: data-id, data-from, data-to, text.rate).
 */
export function readTopology(page) {
	return page.evaluate(() => {
		const svg = document.getElementById('topology');
		const nodes = {}, edges = {};
		for (const g of svg.querySelectorAll('g.node'))
			nodes[g.dataset.id] = g.getAttribute('class');
		for (const g of svg.querySelectorAll('g.edge'))
			edges[g.dataset.id] = { cls: g.getAttribute('class'), from: g.dataset.from, to: g.dataset.to,
				rate: (g.querySelector('text.rate') || {}).textContent || '' };
		return { nodes, edges };
	});
}

/** Fill fields of a form of @p page in order: [selector, value] pairs, a <select> chosen by value, any other field typed into. */
export async function fillFields(page, fields) {
	for (const [sel, value] of fields) {
		if (await page.locator(sel).evaluate((el) => el.tagName === 'SELECT'))
			await page.selectOption(sel, value);
		else
			await page.fill(sel, value);
	}
}
