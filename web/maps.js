// spanbox status page: maps (issue #27, docs/MAPS.md, docs/MGMT.md "Maps"). Lists GET /api/v1/maps
// (one request per refresh: sources, destination, collector, rule count, passed and mirrored
// counters) and, for the map the user opened, one page of its rules (GET .../rules, 50 a page,
// searched and sorted by hits where the appliance can), with their hits; adds a rule (POST
// .../rules), deletes one (DELETE .../rules/{n}, confirmed), and replaces the whole table from a
// JSON file (PUT /api/v1/maps/{id} with the map's other keys as GET /api/v1/maps/{id} gives them).
// A refused change shows the API's error text and changes nothing (the API validates it whole).
// Self-contained: app.js calls initMaps() once and refreshMaps() with every refresh; the list it
// returns is drawn in the topology.
import { api, ApiError } from './api.js';
import { syncTable } from './table.js';
import { count, si, pps, DASH } from './format.js';

const $ = (id) => document.getElementById(id);
export const RULES_PAGE = 50;
const REPROBE_MS = 30000; // ask GET /api/v1/maps again this long after a 404 (an older mgmt)
/** The rule keys (docs/MAPS.md "Rule fields"): "KEY=VALUE" in the search box asks for field=KEY&value=VALUE. */
export const RULE_FIELDS = ['action', 'vlan', 'inner_vlan', 'ethertype', 'src_mac', 'dst_mac', 'src', 'dst',
	'ip_proto', 'dscp', 'src_port', 'dst_port', 'tcp_flags', 'fragment'];
/** Keys of an answer's rule that are not its match: the index and the hits. */
const NOT_MATCH = new Set(['index', 'action', 'packets', 'bytes']);

const mp = {
	hooks: null,
	route: { ok: null, at: 0 },
	list: [],          // the last GET /api/v1/maps maps[]
	prev: null,        // {t, passed: {id: n}} for the pkt/s
	open: null,        // id of the map whose rules are shown
	offset: 0,
	seq: 0,            // rules requests: an answer older than the last one asked is dropped
	busy: false,
	noSort: '',        // why this appliance does not sort rules ('' = it may)
	noSearch: '',      // why it does not search them
	searchErr: '',     // a 400 for this search (a bad field name, ...)
	page: null,        // the last rules answer shown
};

/** A map's sources as "p0 (both), p1 (rx)". */
export const sourcesText = (m) => (m.sources || []).map((s) => `${s.port} (${s.direction || 'both'})`).join(', ') || DASH;

/** A map's destination as "port t" or "group ids". */
export function destText(m) {
	const d = m.destination || {};
	return d.group ? `group ${d.group}` : d.port ? `port ${d.port}` : DASH;
}

/** A rule's match (its keys but action, index and hits) as "ip_proto=6 dst_port=1-1023", "any frame" when none. */
export function matchText(r) {
	const parts = Object.entries(r).filter(([k]) => !NOT_MATCH.has(k))
		.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
	return parts.join(' ') || 'any frame';
}

/** The search box as query parameters: "KEY=VALUE" of a rule key -> field & value, else search. */
export function searchParams(text) {
	const t = text.trim();
	if (!t)
		return '';
	const m = /^([a-z_]+)\s*[=:]\s*(.+)$/.exec(t);
	if (m && RULE_FIELDS.includes(m[1]))
		return `&field=${encodeURIComponent(m[1])}&value=${encodeURIComponent(m[2].trim())}`;
	return `&search=${encodeURIComponent(t)}`;
}

function message(text, kind) {
	const e = $('map-rules-msg');
	e.textContent = text;
	e.className = `map-msg ${kind || ''}`.trim();
	e.hidden = text === '';
}

function failed(e) {
	message(e instanceof ApiError ? e.describe() : String(e && e.message ? e.message : e), 'error');
	mp.hooks.error(e);
}

function done(text) {
	message(text, 'info');
	mp.hooks.notice(text);
}

// ------------------------------------------------------------------------------------------
// the list

function renderMaps(list, dt) {
	const prev = mp.prev;
	syncTable($('maps').tBodies[0], list, (m) => m.id, (m) => {
		const c = m.counters || {};
		const q = prev && prev.passed[m.id];
		const r = Number.isFinite(c.passed) && Number.isFinite(q) && dt > 0 && c.passed >= q ? (c.passed - q) / dt : NaN;
		const drops = (c.drop_txfull || 0) + (c.drop_nombuf || 0) + (c.drop_malformed || 0);
		return [
			{ text: String(m.id), cls: m.id === mp.open ? 'selected' : '' },
			{ text: m.name || DASH, cls: 'name' },
			{ text: sourcesText(m), cls: 'sources' },
			{ text: destText(m), cls: 'destination' },
			{ text: m.collector ? 'collector' : DASH, cls: 'collector',
				title: m.collector ? 'takes the frames of its sources that no other map passed' : 'not a collector' },
			{ text: count(m.rule_count), cls: 'num rules' },
			{ text: count(c.passed), cls: 'num passed', title: 'frames of its sources its rules passed (before its filter and sampling)' },
			{ text: pps(r), cls: 'num passed-pps' },
			{ text: `${count(c.mirrored_packets)} pkts, ${si(c.mirrored_bytes, 'B')}`, cls: 'num mirrored',
				title: 'copies sent to the destination (after the filter)' },
			{ text: count(drops), cls: 'num drops',
				title: `tx full ${count(c.drop_txfull)}, no mbuf ${count(c.drop_nombuf)}, malformed ${count(c.drop_malformed)}` },
			{ button: { label: m.id === mp.open ? 'Rules shown' : 'Rules', aria: `Show the rules of map ${m.id}`,
				onClick: () => openMap(m.id) } },
		];
	});
	for (const tr of $('maps').tBodies[0].rows) {
		tr.classList.toggle('selected', tr.dataset.key === String(mp.open));
		tr.onclick = (ev) => {
			if (!ev.target.closest('button'))
				openMap(Number(tr.dataset.key));
		};
	}
}

/**
 * Read GET /api/v1/maps, render the "Maps" section and the open map's rules page; returns the maps
 * for the topology ([] when this mgmt has no maps route: the section is hidden, asked again every
 * 30 s). Never throws: an error keeps the last list (the connection line tells when mgmt is gone).
 */
export async function refreshMaps() {
	const now = Date.now();
	if (mp.route.ok === false && now - mp.route.at < REPROBE_MS)
		return [];
	let d;
	try {
		d = (await api('GET', '/api/v1/maps')).data || {};
	} catch (e) {
		if (e instanceof ApiError && e.status === 404) {
			mp.route = { ok: false, at: now };
			$('maps-section').hidden = true;
			return [];
		}
		return mp.list;
	}
	mp.route.ok = true;
	$('maps-section').hidden = false;
	const list = Array.isArray(d.maps) ? d.maps : [];
	const t = performance.now();
	const dt = mp.prev ? (t - mp.prev.t) / 1000 : 0;
	mp.list = list;
	renderMaps(list, dt);
	mp.prev = { t, passed: Object.fromEntries(list.map((m) => [m.id, (m.counters || {}).passed])) };
	$('maps-note').textContent = `${list.length} map${list.length === 1 ? '' : 's'}, ` +
		`${count(list.reduce((a, m) => a + (m.rule_count || 0), 0))} rules · ${count(d.classified_frames)} frames classified · ` +
		`${count(d.contexts)} rte_acl contexts, built in ${Number.isFinite(d.build_ms) ? `${d.build_ms} ms` : DASH}, ` +
		`${si(d.memory_bytes, 'B')}`;
	if (mp.open !== null) {
		if (!list.some((m) => m.id === mp.open))
			closeMap();
		else if (!mp.busy)
			await loadRules(); // the hits move: the page is read again with the list
	}
	return list;
}

// ------------------------------------------------------------------------------------------
// one map's rules

function openMap(id) {
	if (mp.open !== id) {
		mp.open = id;
		mp.offset = 0;
		mp.page = null;
		mp.noSort = mp.noSearch = mp.searchErr = ''; // asked again: mgmt may have been upgraded
		$('map-search').value = '';
		$('map-rules-table').tBodies[0].replaceChildren();
		message('');
	}
	$('map-rules').hidden = false;
	renderMaps(mp.list, 0);
	loadRules();
}

function closeMap() {
	mp.open = null;
	mp.page = null;
	$('map-rules').hidden = true;
	renderMaps(mp.list, 0);
}

/** The rules URL of the open map's current page, with sort and search unless the appliance refused them. */
function rulesPath(search) {
	let q = `offset=${mp.offset}&limit=${RULES_PAGE}`;
	if ($('map-sort-hits').checked && !mp.noSort)
		q += '&sort=hits';
	if (search)
		q += searchParams($('map-search').value);
	return `/api/v1/maps/${mp.open}/rules?${q}`;
}

/**
 * Read and show the open map's current page. A 400 naming sort, search, field or value (an
 * appliance that cannot, or a bad field name) is remembered and the page asked again without it; an
 * answer to a search without "matched" comes from an appliance that ignored it (all rules listed).
 */
export async function loadRules() {
	if (mp.open === null)
		return;
	const id = mp.open, seq = ++mp.seq;
	const searching = () => $('map-search').value.trim() !== '' && !mp.noSearch && !mp.searchErr;
	mp.busy = true;
	let d = null;
	try {
		for (let tries = 0; tries < 3 && !d; tries++) {
			try {
				d = (await api('GET', rulesPath(searching()))).data || {};
			} catch (e) {
				if (!(e instanceof ApiError) || e.status !== 400)
					throw e;
				if (e.field === 'sort' && !mp.noSort)
					mp.noSort = e.message;
				else if (['search', 'field', 'value'].includes(e.field) && searching())
					mp.searchErr = e.message;
				else if (e.field === 'offset' && mp.offset > 0)
					mp.offset = 0;
				else
					throw e;
			}
		}
	} catch (e) {
		if (seq === mp.seq)
			$('map-rules-range').textContent = `rules not available: ${e instanceof ApiError ? e.describe() : e}`;
		return;
	} finally {
		mp.busy = false;
	}
	if (seq !== mp.seq || id !== mp.open || !d)
		return;
	if (searching() && d.matched === undefined)
		mp.noSearch = 'the rules route ignored the search (no "matched" in its answer)';
	const searched = searching(); // false now when the route ignored it: the answer is all rules
	const n = searched && Number.isFinite(d.matched) ? d.matched : d.total;
	// past the end (rules deleted, a narrower search): the last page
	if (n > 0 && mp.offset >= n) {
		mp.offset = Math.floor((n - 1) / RULES_PAGE) * RULES_PAGE;
		return loadRules();
	}
	mp.page = d;
	renderRules(id, d, searched ? n : null);
}

function renderRules(id, d, matched) {
	const m = mp.list.find((x) => x.id === id) || {};
	$('map-rules-title').textContent = `Rules of map ${id}${m.name ? ` ${m.name}` : ''}`;
	const rules = d.rules || [];
	const total = count(d.total);
	const of = matched !== null ? `${count(matched)} matching (${total} in all)` : total;
	$('map-rules-range').textContent = rules.length ?
		`rules ${count(mp.offset + 1)}-${count(mp.offset + rules.length)} of ${of}` :
		matched !== null ? `no rule matches (${total} in all)` : 'no rules';
	const n = matched !== null ? matched : d.total;
	$('map-first').disabled = $('map-prev').disabled = mp.offset === 0;
	$('map-next').disabled = $('map-last').disabled = mp.offset + RULES_PAGE >= n;
	const notes = [];
	if ($('map-sort-hits').checked && mp.noSort)
		notes.push(`not sorted by hits: this appliance does not sort rules yet (${mp.noSort}); rules in their order.`);
	if ($('map-search').value.trim() && mp.noSearch)
		notes.push('not searched: this appliance does not search rules yet; all rules are listed.');
	if ($('map-search').value.trim() && mp.searchErr)
		notes.push(`not searched: ${mp.searchErr}`);
	if (rules.length && !rules.some((r) => Number.isFinite(r.packets)))
		notes.push('hits: this appliance does not count per rule yet (—).');
	$('map-rules-note').textContent = notes.join(' ');
	syncTable($('map-rules-table').tBodies[0], rules, (r) => r.index, (r) => [
		{ text: String(r.index), cls: 'index', title: `rules[${r.index}] of the API and its errors` },
		{ text: r.action || DASH, cls: `action ${r.action === 'drop' ? 'bad' : r.action === 'pass' ? 'ok' : ''}`.trim() },
		{ text: matchText(r), cls: 'match' },
		{ text: Number.isFinite(r.packets) ? count(r.packets) : DASH, cls: 'num packets' },
		{ text: Number.isFinite(r.bytes) ? si(r.bytes, 'B') : DASH, cls: 'num bytes',
			title: Number.isFinite(r.bytes) ? `${count(r.bytes)} bytes` : 'no per-rule counters' },
		{ button: { label: 'Delete', aria: `Delete rule ${r.index} of map ${id}`,
			onClick: (ev) => deleteRule(id, r.index, ev.currentTarget) } },
	]);
}

function page(to) {
	const n = mp.page ? (Number.isFinite(mp.page.matched) && $('map-search').value.trim() && !mp.noSearch ?
		mp.page.matched : mp.page.total) : 0;
	const last = n > 0 ? Math.floor((n - 1) / RULES_PAGE) * RULES_PAGE : 0;
	mp.offset = to === 'first' ? 0 : to === 'last' ? last :
		Math.min(last, Math.max(0, mp.offset + (to === 'next' ? RULES_PAGE : -RULES_PAGE)));
	loadRules();
}

// ------------------------------------------------------------------------------------------
// changes

async function deleteRule(id, n, button) {
	if (!window.confirm(`Delete rule ${n} of map ${id}? The later rules move up.`))
		return;
	button.disabled = true;
	try {
		const r = (await api('DELETE', `/api/v1/maps/${id}/rules/${n}`, { timeoutMs: 30000 })).data || {};
		done(`map ${id}: rule ${n} deleted, ${count(r.rule_count)} rules`);
	} catch (e) {
		failed(e);
		button.disabled = false;
	}
	mp.hooks.refreshSoon();
}

async function addRule(ev) {
	ev.preventDefault();
	const id = mp.open, input = $('map-rule-json');
	let rule;
	try {
		rule = JSON.parse(input.value);
	} catch (e) {
		message(`the rule is not JSON (${e.message}): write one object, e.g. {"action": "pass", "dst_port": "873"}`, 'error');
		return;
	}
	if (!rule || typeof rule !== 'object' || Array.isArray(rule)) {
		message('the rule must be one JSON object, e.g. {"action": "pass", "dst_port": "873"}', 'error');
		return;
	}
	const button = $('map-add-form').querySelector('button[type=submit]');
	button.disabled = true;
	try {
		const r = (await api('POST', `/api/v1/maps/${id}/rules`, { body: rule, timeoutMs: 30000 })).data || {};
		done(`map ${id}: rule ${r.index} added, ${count(r.rule_count)} rules`);
		input.value = '';
	} catch (e) {
		failed(e);
	}
	button.disabled = false;
	mp.hooks.refreshSoon();
}

/** The rules of an uploaded file's text: an array of rules or {"rules": [...]}; throws Error saying why not. */
export function rulesOfFile(text) {
	let x;
	try {
		x = JSON.parse(text);
	} catch (e) {
		throw new Error(`not JSON (${e.message})`);
	}
	if (Array.isArray(x))
		return x;
	if (x && typeof x === 'object' && Array.isArray(x.rules))
		return x.rules;
	throw new Error('neither an array of rules nor an object {"rules": [...]}');
}

async function uploadRules(ev) {
	ev.preventDefault();
	const id = mp.open, file = $('map-upload').files[0];
	if (!file) {
		message('choose a JSON file of rules first', 'error');
		return;
	}
	let rules;
	try {
		rules = rulesOfFile(await file.text());
	} catch (e) {
		message(`${file.name}: ${e.message}; nothing sent`, 'error');
		return;
	}
	const m = mp.list.find((x) => x.id === id) || {};
	if (!window.confirm(`Replace the ${count(m.rule_count)} rules of map ${id} with the ${count(rules.length)} rules of ${file.name}?`))
		return;
	const button = $('map-upload-form').querySelector('button[type=submit]');
	button.disabled = true;
	try {
		// the map's other keys as they run (GET answers them with rule_count and counters, not the rules)
		const cur = (await api('GET', `/api/v1/maps/${id}`)).data || {};
		delete cur.rule_count;
		delete cur.counters;
		cur.rules = rules;
		const r = (await api('PUT', `/api/v1/maps/${id}`, { body: cur, timeoutMs: 60000 })).data || {};
		const warn = Number.isFinite(r.shadowed_rules) && r.shadowed_rules ? `; ${count(r.shadowed_rules)} shadowed (never decide)` : '';
		done(`map ${id}: rule table replaced from ${file.name}, ${count(r.rule_count)} rules${warn}`);
		$('map-upload').value = '';
		mp.offset = 0;
	} catch (e) {
		failed(e);
	}
	button.disabled = false;
	mp.hooks.refreshSoon();
}

/** Wire the rules panel; @p hooks: {refreshSoon(), notice(text), error(e)} of app.js. */
export function initMaps(hooks) {
	mp.hooks = hooks;
	for (const [id, to] of [['map-first', 'first'], ['map-prev', 'prev'], ['map-next', 'next'], ['map-last', 'last']])
		$(id).addEventListener('click', () => page(to));
	$('map-close').addEventListener('click', closeMap);
	$('map-sort-hits').addEventListener('change', () => {
		mp.offset = 0;
		loadRules();
	});
	let timer = null;
	$('map-search').addEventListener('input', () => {
		clearTimeout(timer);
		timer = setTimeout(() => {
			mp.offset = 0;
			mp.searchErr = '';
			loadRules();
		}, 300);
	});
	$('map-add-form').addEventListener('submit', addRule);
	$('map-upload-form').addEventListener('submit', uploadRules);
}
