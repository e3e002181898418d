// spanbox status page: building table rows, shared by the sections that render lists (captures,
// top talkers).
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
