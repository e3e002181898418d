/* SPDX-License-Identifier: BSD-3-Clause */
/* Read-only PCI / PCI Express config space decoder (sources and register map in include/spanbox/pcie.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spanbox/pcie.h"

#define SYSFS_PCI "/sys/bus/pci/devices/"

/* Config registers (7.5.1.1) */
#define CFG_VENDOR 0x00
#define CFG_DEVICE 0x02
#define CFG_STATUS 0x06
#define CFG_STATUS_CAP_LIST 0x0010 /* Status bit 4: Capabilities List */
#define CFG_HEADER_TYPE 0x0E
#define CFG_CAP_PTR 0x34           /* header types 0 and 1 */
#define CFG_CAP_PTR_CARDBUS 0x14   /* header type 2 */
#define CAP_FIRST 0x40             /* capabilities live at 0x40..0xFF */

/* PCI Express capability registers, offsets from the capability (7.5.3) */
#define EXP_FLAGS 0x02   /* PCI Express Capabilities register */
#define EXP_DEVCAP 0x04  /* Device Capabilities */
#define EXP_DEVCTL 0x08  /* Device Control */
#define EXP_LNKCAP 0x0C  /* Link Capabilities */
#define EXP_LNKSTA 0x12  /* Link Status */
#define EXP_MIN_LEN 0x14 /* bytes needed up to and including Link Status */

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8); /* config space is little-endian */
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* 0=128 ... 5=4096 bytes (Max_Payload_Size and Max_Read_Request_Size encodings); 6, 7 reserved */
static uint32_t size_code(unsigned int code)
{
	return code <= 5 ? 128u << code : 0;
}

/* Link speed codes 1..6: 2.5, 5, 8, 16, 32, 64 GT/s (x10). The codes index the Supported Link
 * Speeds Vector (Link Capabilities 2), whose bits are these speeds in this order. */
static uint16_t speed_code(unsigned int code)
{
	static const uint16_t gts10[] = {0, 25, 50, 80, 160, 320, 640};

	return code < sizeof(gts10) / sizeof(gts10[0]) ? gts10[code] : 0;
}

static bool ishex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool sbx_pcie_bdf_valid(const char *s)
{
	static const char *const shape = "xxxx:xx:xx.x";
	int i;

	if (!s || strlen(s) != SBX_PCIE_BDF_LEN - 1)
		return false;
	for (i = 0; shape[i]; i++)
		if (shape[i] == 'x' ? !ishex(s[i]) : s[i] != shape[i])
			return false;
	/* device: 5 bits (0x00..0x1f); function: 3 bits (0..7) */
	return strtoul((char[]){s[8], s[9], 0}, NULL, 16) <= 0x1f && s[11] >= '0' && s[11] <= '7';
}

bool sbx_pcie_devargs_bdf(const char *devargs, char bdf[SBX_PCIE_BDF_LEN])
{
	size_t n = strcspn(devargs, ","), k;

	if (n == SBX_PCIE_BDF_LEN - 1 - 5) /* "BB:DD.F": domain 0000 */
		snprintf(bdf, SBX_PCIE_BDF_LEN, "0000:%.7s", devargs);
	else if (n == SBX_PCIE_BDF_LEN - 1)
		snprintf(bdf, SBX_PCIE_BDF_LEN, "%.12s", devargs);
	else
		return false;
	for (k = 0; bdf[k]; k++) /* sysfs names are lower case */
		if (bdf[k] >= 'A' && bdf[k] <= 'F')
			bdf[k] = (char)(bdf[k] - 'A' + 'a');
	return sbx_pcie_bdf_valid(bdf);
}

int sbx_pcie_decode_buf(const uint8_t *cfg, size_t len, struct sbx_pcie_info *out, char *err,
			size_t errlen)
{
	bool visited[256] = {false};
	unsigned int ptr_off, ptr, id;
	uint16_t flags, lnk;
	uint32_t v;
	const uint8_t *c;

	/* keep name and bdf, reset everything else */
	memset(&out->cfg_len, 0, sizeof(*out) - offsetof(struct sbx_pcie_info, cfg_len));
	out->cfg_len = (uint32_t)(len > SBX_PCIE_CFG_MAX ? SBX_PCIE_CFG_MAX : len);
	if (len < SBX_PCIE_CFG_HDR)
		return fail(err, errlen, "truncated config space: %zu bytes, the header alone is %d", len,
			    SBX_PCIE_CFG_HDR);
	out->vendor_id = rd16(cfg + CFG_VENDOR);
	out->device_id = rd16(cfg + CFG_DEVICE);
	if (out->vendor_id == 0xffff)
		return fail(err, errlen, "vendor ID 0xffff: no device responds (removed or powered off?)");
	out->header_type = cfg[CFG_HEADER_TYPE] & 0x7f;
	if (out->header_type > 2)
		return fail(err, errlen, "unknown header type %u", out->header_type);
	if (!(rd16(cfg + CFG_STATUS) & CFG_STATUS_CAP_LIST))
		return 0; /* no capability list, so no PCI Express capability */

	ptr_off = out->header_type == 2 ? CFG_CAP_PTR_CARDBUS : CFG_CAP_PTR;
	ptr = cfg[ptr_off] & 0xfc; /* the two low bits are reserved */
	while (ptr) {
		if (ptr < CAP_FIRST)
			return fail(err, errlen, "capability pointer 0x%02x (at 0x%02x) is below 0x40", ptr,
				    ptr_off);
		if (ptr + 2 > len)
			return fail(err, errlen,
				    "capability at 0x%02x is past the end of the %zu bytes read%s", ptr, len,
				    len == SBX_PCIE_CFG_HDR ? " (only root can read beyond the 64-byte header)"
							    : "");
		if (visited[ptr])
			return fail(err, errlen, "capability list loops: 0x%02x (at 0x%02x) was already visited",
				    ptr, ptr_off);
		visited[ptr] = true;
		id = cfg[ptr];
		if (out->nb_caps < SBX_PCIE_MAX_CAPS) {
			out->cap_ids[out->nb_caps] = (uint8_t)id;
			out->cap_offsets[out->nb_caps] = (uint8_t)ptr;
			out->nb_caps++;
		}
		if (id == SBX_PCIE_CAP_ID_EXP && !out->has_pcie) {
			if (ptr + EXP_MIN_LEN > len)
				return fail(err, errlen,
					    "PCI Express capability at 0x%02x is cut short: %zu bytes read, need %u",
					    ptr, len, ptr + EXP_MIN_LEN);
			out->has_pcie = true;
			out->pcie_cap = (uint8_t)ptr;
		}
		ptr_off = ptr + 1;
		ptr = cfg[ptr_off] & 0xfc;
	}
	if (!out->has_pcie)
		return 0;

	c = cfg + out->pcie_cap;
	flags = rd16(c + EXP_FLAGS);
	out->pcie_version = flags & 0xf;
	out->port_type = (flags >> 4) & 0xf;
	out->mps_supported = size_code(rd32(c + EXP_DEVCAP) & 0x7);
	v = rd16(c + EXP_DEVCTL);
	out->mps = size_code((v >> 5) & 0x7);
	out->mrrs = size_code((v >> 12) & 0x7);
	/* Root Complex Integrated Endpoints and Event Collectors have no link: the link registers
	 * are reserved for them (7.5.3) */
	out->has_link = out->port_type != SBX_PCIE_TYPE_RCIEP && out->port_type != SBX_PCIE_TYPE_RCEC;
	if (out->has_link) {
		v = rd32(c + EXP_LNKCAP);
		out->link_speed_max_code = v & 0xf;
		out->link_speed_max = speed_code(v & 0xf);
		out->link_width_max = (v >> 4) & 0x3f;
		lnk = rd16(c + EXP_LNKSTA);
		out->link_speed_code = lnk & 0xf;
		out->link_speed = speed_code(lnk & 0xf);
		out->link_width = (lnk >> 4) & 0x3f;
	}
	return 0;
}

/* Read at most SBX_PCIE_CFG_MAX bytes of @path (O_RDONLY: config space is never written). */
static int read_cfg(const char *path, uint8_t *buf, size_t *len, char *err, size_t errlen)
{
	ssize_t n;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return fail(err, errlen, "cannot open %s: %s", path, strerror(errno));
	while (got < SBX_PCIE_CFG_MAX) {
		n = read(fd, buf + got, SBX_PCIE_CFG_MAX - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fail(err, errlen, "cannot read %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return 0;
}

int sbx_pcie_read(const char *bdf_or_path, struct sbx_pcie_info *out, char *err, size_t errlen)
{
	uint8_t buf[SBX_PCIE_CFG_MAX];
	char path[PATH_MAX], msg[384];
	size_t len = 0;
	bool is_bdf = sbx_pcie_bdf_valid(bdf_or_path);

	if (!is_bdf && (!bdf_or_path || !strchr(bdf_or_path, '/')))
		return fail(err, errlen, "%s: not a PCI address DDDD:BB:DD.F (hex) nor a file path",
			    bdf_or_path ? bdf_or_path : "(null)");
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", bdf_or_path);
	if (is_bdf) {
		for (int i = 0; i < SBX_PCIE_BDF_LEN - 1; i++)
			out->bdf[i] = (char)(bdf_or_path[i] >= 'A' && bdf_or_path[i] <= 'F'
						     ? bdf_or_path[i] - 'A' + 'a'
						     : bdf_or_path[i]);
		snprintf(out->name, sizeof(out->name), "%s", out->bdf);
		snprintf(path, sizeof(path), SYSFS_PCI "%s/config", out->bdf);
	} else {
		snprintf(path, sizeof(path), "%s", bdf_or_path);
	}
	if (read_cfg(path, buf, &len, msg, sizeof(msg)) != 0 ||
	    sbx_pcie_decode_buf(buf, len, out, msg, sizeof(msg)) != 0)
		return fail(err, errlen, "%s: %s", out->name, msg);
	return 0;
}

int sbx_pcie_parents(const char *devpath, char bridges[][SBX_PCIE_BDF_LEN], int max)
{
	char found[SBX_PCIE_MAX_CHAIN + 1][SBX_PCIE_BDF_LEN];
	const char *p = devpath, *e;
	size_t l;
	int n = 0, last_is_bdf = 0, i, out = 0;

	if (!devpath)
		return -1;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		l = e ? (size_t)(e - p) : strlen(p);
		last_is_bdf = 0;
		if (l == SBX_PCIE_BDF_LEN - 1) {
			char c[SBX_PCIE_BDF_LEN];

			memcpy(c, p, l);
			c[l] = 0;
			if (sbx_pcie_bdf_valid(c)) {
				last_is_bdf = 1;
				if (n == SBX_PCIE_MAX_CHAIN + 1) { /* deeper than we track: keep the nearest */
					memmove(found[0], found[1], sizeof(found[0]) * SBX_PCIE_MAX_CHAIN);
					n--;
				}
				memcpy(found[n++], c, sizeof(c));
			}
		}
		p += l;
	}
	if (!last_is_bdf)
		return -1;
	/* found[n-1] is the device; bridges are found[n-2] .. found[0] */
	for (i = n - 2; i >= 0 && out < max; i--)
		memcpy(bridges[out++], found[i], SBX_PCIE_BDF_LEN);
	return out;
}

int sbx_pcie_path(const char *bdf, struct sbx_pcie_info chain[], int max, char *err, size_t errlen)
{
	char link[PATH_MAX], real[PATH_MAX];
	char bridges[SBX_PCIE_MAX_CHAIN][SBX_PCIE_BDF_LEN];
	int nb, i;

	if (!sbx_pcie_bdf_valid(bdf))
		return fail(err, errlen, "%s: not a PCI address DDDD:BB:DD.F (hex)", bdf ? bdf : "(null)");
	if (max < 1)
		return fail(err, errlen, "%s: no room for the result", bdf);
	if (sbx_pcie_read(bdf, &chain[0], err, errlen) != 0)
		return -1;
	snprintf(link, sizeof(link), SYSFS_PCI "%s", chain[0].bdf);
	if (!realpath(link, real))
		return fail(err, errlen, "%s: cannot resolve %s: %s", bdf, link, strerror(errno));
	nb = sbx_pcie_parents(real, bridges, SBX_PCIE_MAX_CHAIN);
	if (nb < 0)
		return fail(err, errlen, "%s: %s does not end with a PCI address", bdf, real);
	for (i = 0; i < nb && i + 1 < max; i++)
		if (sbx_pcie_read(bridges[i], &chain[i + 1], err, errlen) != 0)
			return -1;
	return i + 1;
}

const char *sbx_pcie_port_type_name(uint8_t port_type)
{
	static const char *const names[] = {
		[SBX_PCIE_TYPE_ENDPOINT] = "Endpoint",
		[SBX_PCIE_TYPE_LEGACY_ENDPOINT] = "Legacy Endpoint",
		[SBX_PCIE_TYPE_ROOT_PORT] = "Root Port",
		[SBX_PCIE_TYPE_UPSTREAM] = "Switch Upstream Port",
		[SBX_PCIE_TYPE_DOWNSTREAM] = "Switch Downstream Port",
		[SBX_PCIE_TYPE_PCIE_TO_PCI] = "PCIe to PCI/PCI-X Bridge",
		[SBX_PCIE_TYPE_PCI_TO_PCIE] = "PCI/PCI-X to PCIe Bridge",
		[SBX_PCIE_TYPE_RCIEP] = "Root Complex Integrated Endpoint",
		[SBX_PCIE_TYPE_RCEC] = "Root Complex Event Collector",
	};
	static const char *const reserved[16] = {
		"type 0", "type 1", "type 2", "type 3", "type 4", "type 5", "type 6", "type 7",
		"type 8", "type 9", "type 10", "type 11", "type 12", "type 13", "type 14", "type 15",
	};

	if (port_type < sizeof(names) / sizeof(names[0]) && names[port_type])
		return names[port_type];
	return reserved[port_type & 0xf];
}

const char *sbx_pcie_speed_str(uint16_t gts10, char *buf, size_t len)
{
	if (!gts10)
		snprintf(buf, len, "unknown");
	else if (gts10 % 10)
		snprintf(buf, len, "%u.%u GT/s", gts10 / 10u, gts10 % 10u);
	else
		snprintf(buf, len, "%u GT/s", gts10 / 10u);
	return buf;
}

/* The device's end of a link faces upstream; root and switch downstream ports face downstream. */
static bool faces_upstream(const struct sbx_pcie_info *d)
{
	return d->port_type == SBX_PCIE_TYPE_ENDPOINT || d->port_type == SBX_PCIE_TYPE_LEGACY_ENDPOINT ||
	       d->port_type == SBX_PCIE_TYPE_UPSTREAM || d->port_type == SBX_PCIE_TYPE_PCIE_TO_PCI;
}

static bool faces_downstream(const struct sbx_pcie_info *d)
{
	return d->port_type == SBX_PCIE_TYPE_ROOT_PORT || d->port_type == SBX_PCIE_TYPE_DOWNSTREAM ||
	       d->port_type == SBX_PCIE_TYPE_PCI_TO_PCIE;
}

static bool linked(const struct sbx_pcie_info *d)
{
	return d->has_pcie && d->has_link;
}

/* Is chain[i] the upstream-facing end of a link whose other end is chain[i + 1]? */
static bool paired_up(const struct sbx_pcie_info chain[], int n, int i)
{
	return i + 1 < n && linked(&chain[i]) && linked(&chain[i + 1]) && faces_upstream(&chain[i]) &&
	       faces_downstream(&chain[i + 1]);
}

struct warn_buf {
	char (*w)[SBX_PCIE_WARN_LEN];
	int n, max;
};

/* Append "NAME: message" to @wb; a name longer than 60 characters (a file path) keeps its tail. */
__attribute__((format(printf, 3, 4)))
static void add(struct warn_buf *wb, const struct sbx_pcie_info *d, const char *fmt, ...)
{
	char *w;
	size_t l = strlen(d->name);
	va_list ap;

	if (wb->n >= wb->max)
		return;
	w = wb->w[wb->n++];
	if (l > 60) {
		memcpy(w, "...", 3);
		memcpy(w + 3, d->name + l - 57, 57);
		l = 60;
	} else {
		memcpy(w, d->name, l);
	}
	memcpy(w + l, ": ", 2);
	va_start(ap, fmt);
	vsnprintf(w + l + 2, SBX_PCIE_WARN_LEN - l - 2, fmt, ap);
	va_end(ap);
}

static uint16_t min16(uint16_t a, uint16_t b)
{
	return a < b ? a : b;
}

/* Warn when the link of chain[i] (shared with chain[i + 1] when paired) runs below its ends. */
static void link_warnings(struct warn_buf *wb, const struct sbx_pcie_info chain[], int n, int i)
{
	const struct sbx_pcie_info *d = &chain[i], *up = NULL;
	char s1[24], s2[24], s3[24], s4[24];
	uint16_t wmax = d->link_width_max, smax = d->link_speed_max;

	if (!linked(d) || d->link_width == 0)
		return; /* no link, or link down (an empty slot) */
	if (i > 0 && paired_up(chain, n, i - 1))
		return; /* this downstream port's link was reported with the device below it */
	if (paired_up(chain, n, i)) {
		up = &chain[i + 1];
		wmax = min16(wmax, up->link_width_max);
		if (smax && up->link_speed_max)
			smax = min16(smax, up->link_speed_max);
	}
	if (d->link_width < wmax) {
		if (up)
			add(wb, d, "link trained at x%u of x%u (this end x%u, %s x%u)", d->link_width, wmax,
			    d->link_width_max, up->name, up->link_width_max);
		else
			add(wb, d, "link trained at x%u of x%u", d->link_width, wmax);
	}
	if (d->link_speed && smax && d->link_speed < smax) {
		sbx_pcie_speed_str(d->link_speed, s1, sizeof(s1));
		sbx_pcie_speed_str(smax, s2, sizeof(s2));
		if (up)
			add(wb, d, "link trained at %s of %s (this end %s, %s %s)", s1, s2,
			    sbx_pcie_speed_str(d->link_speed_max, s3, sizeof(s3)), up->name,
			    sbx_pcie_speed_str(up->link_speed_max, s4, sizeof(s4)));
		else
			add(wb, d, "link trained at %s of %s", s1, s2);
	}
}

int sbx_pcie_warnings(const struct sbx_pcie_info chain[], int n, char warn[][SBX_PCIE_WARN_LEN],
		      int max)
{
	struct warn_buf wb = {.w = warn, .n = 0, .max = max};
	const struct sbx_pcie_info *dev = &chain[0];
	int i;

	if (n < 1)
		return 0;
	for (i = 0; i < n; i++) {
		const struct sbx_pcie_info *d = &chain[i];

		if (!d->has_pcie) {
			add(&wb, d, "no PCI Express capability");
			continue;
		}
		if (i == 0 && d->mps == 128) {
			if (d->mps_supported > 128)
				add(&wb, d,
				    "MPS is 128 B (device supports %u B): a 1500 B frame takes 12 TLPs, 6 at 256 B",
				    d->mps_supported);
			else
				add(&wb, d, "MPS is 128 B (the most the device supports): a 1500 B frame takes 12 TLPs");
		}
		/* a device above its bridge can send TLPs the bridge rejects as malformed; below it is
		 * what Linux's pci=pcie_bus_perf sets on purpose (reads then bounded by MRRS) */
		if (i > 0 && dev->has_pcie && d->mps != dev->mps)
			add(&wb, dev, "device MPS %u B differs from bridge %s MPS %u B%s", dev->mps, d->name,
			    d->mps,
			    dev->mps > d->mps ? " (TLPs larger than the bridge accepts)"
					      : " (smaller: fine if set so by pci=pcie_bus_perf)");
		link_warnings(&wb, chain, n, i);
	}
	return wb.n;
}
