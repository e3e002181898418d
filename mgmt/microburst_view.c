/* SPDX-License-Identifier: BSD-3-Clause */
/* A port's microburst windows as /status shows them: shm->microburst[i], written by the primary
 * (primary/microburst.c); the fields may mix two seconds when read while it writes. */
#include "microburst_view.h"
#include "timefmt.h"

double mgmt_microburst_pct(uint32_t ppm)
{
	return (double)(((uint64_t)ppm + 50) / 100) / 100.0;
}

/* One direction: peak and average of the last second (null without a speed), its busiest window. */
static cJSON *dir_json(const struct sbx_mb_port_shm *m, unsigned int d, bool speed, bool have)
{
	cJSON *o = cJSON_CreateObject();
	char when[40];

	if (speed && have) {
		cJSON_AddNumberToObject(o, "peak_pct", mgmt_microburst_pct(m->peak_ppm[d]));
		cJSON_AddNumberToObject(o, "avg_pct", mgmt_microburst_pct(m->avg_ppm[d]));
	} else {
		cJSON_AddNullToObject(o, "peak_pct");
		cJSON_AddNullToObject(o, "avg_pct");
	}
	cJSON_AddNumberToObject(o, "peak_bytes", have ? (double)m->peak_bytes[d] : 0);
	if (have && m->peak_start_ns[d]) {
		mgmt_rfc3339(m->peak_start_ns[d], when, sizeof(when));
		cJSON_AddStringToObject(o, "peak_start", when);
	} else {
		cJSON_AddNullToObject(o, "peak_start");
	}
	cJSON_AddNumberToObject(o, "bursts", (double)m->bursts[d]);
	return o;
}

cJSON *mgmt_microburst_json(const struct sbx_shm *shm, uint16_t i)
{
	const struct sbx_mb_port_shm *m = &shm->microburst[i];
	bool have = __atomic_load_n(&m->second, __ATOMIC_ACQUIRE) != 0, speed = m->speed_mbps != 0;
	cJSON *o;

	if (!shm->cfg.mb_enabled)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "window_us", shm->cfg.mb_window_us);
	cJSON_AddNumberToObject(o, "threshold_pct", shm->cfg.mb_threshold_pct);
	if (speed)
		cJSON_AddNumberToObject(o, "speed_mbps", m->speed_mbps);
	else
		cJSON_AddNullToObject(o, "speed_mbps");
	cJSON_AddStringToObject(o, "speed_source", !speed ? "none" : m->speed_configured ? "config" : "link");
	if (have)
		cJSON_AddNumberToObject(o, "second", (double)m->second);
	else
		cJSON_AddNullToObject(o, "second");
	cJSON_AddItemToObject(o, "rx", dir_json(m, SBX_MB_RX, speed, have));
	cJSON_AddItemToObject(o, "tx", dir_json(m, SBX_MB_TX, speed, have));
	cJSON_AddNumberToObject(o, "windows", (double)m->windows);
	cJSON_AddNumberToObject(o, "events", (double)m->events);
	cJSON_AddNumberToObject(o, "events_suppressed", (double)m->events_suppressed);
	cJSON_AddNumberToObject(o, "late_windows", (double)m->late_windows);
	cJSON_AddNumberToObject(o, "lost_windows", (double)m->lost_windows);
	return o;
}
