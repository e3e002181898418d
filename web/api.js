// REST client of the status page: same-origin requests to /api/v1, errors turned into words.

/** An API call that failed. status 0: no answer at all (mgmt unreachable or timed out). */
export class ApiError extends Error {
	constructor(status, message, field, method, path) {
		super(message);
		this.name = 'ApiError';
		this.status = status;
		this.field = field || null;
		this.method = method;
		this.path = path;
	}

	/** One sentence for a person: "POST /api/v1/mirrors: 409 mirror id 7 taken (field: id)". */
	describe() {
		const code = this.status ? `${this.status} ` : '';
		const field = this.field ? ` (field: ${this.field})` : '';
		return `${this.method} ${this.path}: ${code}${this.message}${field}`;
	}
}

const TOKEN_KEY = 'spanbox.token';

/** The bearer token of this browser tab (sessionStorage only), or "" when none was typed. */
export function getToken() {
	try {
		return sessionStorage.getItem(TOKEN_KEY) || '';
	} catch {
		return '';
	}
}

/** Keep @p token for this tab (sessionStorage); "" forgets it. */
export function setToken(token) {
	try {
		if (token)
			sessionStorage.setItem(TOKEN_KEY, token);
		else
			sessionStorage.removeItem(TOKEN_KEY);
	} catch {
		/* storage disabled: the token lives only as long as this call */
	}
}

/**
 * One request. Every request carries the token (when one was typed) as
 * "Authorization: Bearer ...": a viewer token reads (needed when mgmt listens on another address
 * than 127.0.0.1), an admin token also writes. A body is sent as JSON.
 * @returns {Promise<{status:number, data:any, serverTime:number|null}>} serverTime: ms since the
 *          epoch from the Date header (the appliance's clock), null without one.
 * @throws ApiError: status 0 when mgmt did not answer within @p timeoutMs, else the HTTP status
 *         with error.message / error.field of the JSON error body.
 */
export async function api(method, path, { body, timeoutMs = 4000 } = {}) {
	const headers = { Accept: 'application/json' };
	const init = { method, headers, cache: 'no-store' };
	const token = getToken();
	if (token)
		headers.Authorization = `Bearer ${token}`;
	if (body !== undefined) {
		headers['Content-Type'] = 'application/json';
		init.body = JSON.stringify(body);
	}
	const ctl = new AbortController();
	const timer = setTimeout(() => ctl.abort(), timeoutMs);
	init.signal = ctl.signal;
	let res;
	try {
		res = await fetch(path, init);
	} catch (e) {
		const why = ctl.signal.aborted ? `no answer within ${timeoutMs / 1000} s` : 'no answer (connection refused or closed)';
		throw new ApiError(0, why, null, method, path);
	} finally {
		clearTimeout(timer);
	}
	let data = null;
	const text = await res.text().catch(() => '');
	if (text) {
		try {
			data = JSON.parse(text);
		} catch {
			data = null;
		}
	}
	if (!res.ok) {
		const err = data && data.error ? data.error : null;
		const msg = err && err.message ? err.message : (res.statusText || 'request failed');
		throw new ApiError(res.status, msg, err ? err.field : null, method, path);
	}
	const date = Date.parse(res.headers.get('Date') || '');
	return { status: res.status, data, serverTime: Number.isNaN(date) ? null : date };
}
