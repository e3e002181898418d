// Number, rate and duration formatting for the status page.

const DASH = '\u2014'; // shown where a value is unknown

/** An integer counter with thousands separators: 1234567 -> "1,234,567". */
export function count(n) {
	return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : DASH;
}

/** A value with an SI prefix (k, M, G, T; factor 1000): si(1234, 'bit/s') -> "1.23 kbit/s". */
export function si(v, unit = '') {
	if (!Number.isFinite(v))
		return DASH;
	const prefixes = ['', 'k', 'M', 'G', 'T', 'P'];
	let i = 0;
	let x = Math.abs(v);
	while (x >= 1000 && i < prefixes.length - 1) {
		x /= 1000;
		i++;
	}
	const digits = i === 0 ? (x < 10 && x % 1 !== 0 ? 1 : 0) : (x < 10 ? 2 : x < 100 ? 1 : 0);
	const sign = v < 0 ? '-' : '';
	return `${sign}${x.toFixed(digits)}${unit || prefixes[i] ? ' ' : ''}${prefixes[i]}${unit}`;
}

/** Bits per second: bps(1.5e6) -> "1.50 Mbit/s". */
export const bps = (v) => si(v, 'bit/s');

/** Packets per second: pps(12345) -> "12.3 kpkt/s". */
export const pps = (v) => si(v, 'pkt/s');

/** A duration in seconds as "3 d 4 h", "2 h 05 min", "4 min 09 s", "12 s". */
export function duration(s) {
	if (!Number.isFinite(s) || s < 0)
		return DASH;
	s = Math.floor(s);
	const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600);
	const m = Math.floor((s % 3600) / 60), sec = s % 60;
	const p2 = (x) => String(x).padStart(2, '0');
	if (d > 0)
		return `${d} d ${h} h`;
	if (h > 0)
		return `${h} h ${p2(m)} min`;
	if (m > 0)
		return `${m} min ${p2(sec)} s`;
	return `${sec} s`;
}

/** Milliseconds with up to 3 decimals: ms(1.6634) -> "1.663 ms". */
export function ms(v) {
	return Number.isFinite(v) ? `${Number(v.toFixed(3))} ms` : DASH;
}

export { DASH };
