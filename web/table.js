// spanbox status page: building table rows, shared by the sections that render lists (captures,
// top talkers, maps): cell() for rows built anew, syncTable() for rows updated in place by key.
import { DASH } from './format.js';

/**
 * Append a cell to row @p tr and return it: the row's first cell is a row header (th scope=row),
 * the others td. @p text is shown as a string, DASH when undefined, null or ''; @p cls and @p title
 * set the class and the tooltip when given. A caller that fills the cell with elements replaces
 * its children afterwards.
 */
export function cell(tr, text, cls, title) {
	const td = document.createElement(tr.children.length ? 'td' : 'th');
	if (!tr.children.length)
		td.scope = 'row';
	if (cls)
		td.className = cls;
	if (title)
		td.title = title;
	td.textContent = text === undefined || text === null || text === '' ? DASH : String(text);
	tr.append(td);
	return td;
}

/* ---- rows keyed by id, updated in place (buttons survive the refresh) ---- */

/**
 * Make @p tbody show one row per item, in order. @p cells(item) returns the row's cells: a
 * string, or {text, cls, title}, or {button: {label, aria, disabled, onClick}}. The first cell is a
 * row header.
 */
export function syncTable(tbody, items, keyOf, cells) {
	const keep = new Set();
	items.forEach((item, i) => {
		const key = String(keyOf(item));
		keep.add(key);
		let tr = tbody.querySelector(`tr[data-key="${CSS.escape(key)}"]`);
		if (!tr) {
			tr = document.createElement('tr');
			tr.dataset.key = key;
		}
		setCells(tr, cells(item));
		if (tbody.children[i] !== tr)
			tbody.insertBefore(tr, tbody.children[i] || null);
	});
	for (const tr of [...tbody.children])
		if (!keep.has(tr.dataset.key))
			tr.remove();
	const table = tbody.closest('table');
	let empty = table.nextElementSibling;
	if (!empty || !empty.classList.contains('empty')) {
		empty = document.createElement('p');
		empty.className = 'empty';
		empty.textContent = 'none';
		table.after(empty);
	}
	empty.hidden = items.length > 0;
}

function setCells(tr, specs) {
	if (tr.children.length !== specs.length) {
		tr.replaceChildren();
		specs.forEach((_, i) => {
			const c = document.createElement(i === 0 ? 'th' : 'td');
			if (i === 0)
				c.scope = 'row';
			tr.append(c);
		});
	}
	specs.forEach((spec, i) => {
		const c = tr.children[i];
		const s = typeof spec === 'object' && spec !== null ? spec : { text: spec };
		c.className = s.cls || '';
		if (s.title)
			c.title = s.title;
		else
			c.removeAttribute('title');
		if (s.button) {
			let b = c.querySelector('button');
			if (!b) {
				c.replaceChildren();
				b = document.createElement('button');
				b.type = 'button';
				c.append(b);
			}
			b.textContent = s.button.label;
			b.setAttribute('aria-label', s.button.aria);
			b.disabled = !!s.button.disabled;
			b.onclick = s.button.onClick;
			return;
		}
		const text = s.text === undefined || s.text === null ? DASH : String(s.text);
		if (c.textContent !== text || c.children.length)
			c.textContent = text;
	});
}
