/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the PCIe config-space decoder (shared/pcie.c) on the hand-built fixtures of
 * tests/fixtures/pcie (make_fixtures.py documents each file). Prints TAP; exits 1 when a case failed.
 * Usage: test_pcie <repo-root>
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spanbox/pcie.h"
#include "tap.h"

static const char *root;

static const char *fixture(const char *name)
{
	static char path[1024];

	snprintf(path, sizeof(path), "%s/tests/fixtures/pcie/%s", root, name);
	return path;
}

/* Read fixture @name into @d; a failure is reported as a failed case. */
static bool load(const char *name, struct sbx_pcie_info *d)
{
	char err[512];

	if (sbx_pcie_read(fixture(name), d, err, sizeof(err)) != 0) {
		check(false, "%s decodes: %s", name, err);
		return false;
	}
	return check(true, "%s decodes", name);
}

/* Read fixture @name, expecting an error containing @want1 and @want2. */
static void load_fails(const char *name, const char *want1, const char *want2)
{
	struct sbx_pcie_info d;
	char err[512] = "";
	int rc = sbx_pcie_read(fixture(name), &d, err, sizeof(err));

	printf("# %s: %s\n", name, err);
	check(rc == -1 && strstr(err, want1) && strstr(err, want2) && strstr(err, name),
	      "%s is refused naming the file, with \"%s\" and \"%s\"", name, want1, want2);
}

/* Capability list of @d is exactly the @n (id, offset) pairs given as varargs ints. */
static bool caps(const struct sbx_pcie_info *d, int n, ...)
{
	bool ok = d->nb_caps == n;
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		int id = va_arg(ap, int), off = va_arg(ap, int);

		ok = ok && i < d->nb_caps && d->cap_ids[i] == id && d->cap_offsets[i] == off;
	}
	va_end(ap);
	return ok;
}

struct expect {
	uint16_t vendor, device;
	uint8_t header_type;
	uint32_t cfg_len;
	uint8_t cap, version, port_type;
	uint32_t mps_sup, mps, mrrs;
	bool has_link;
	uint16_t speed_max;
	uint8_t width_max;
	uint16_t speed;
	uint8_t width;
};

static void check_fields(const char *name, const struct sbx_pcie_info *d, const struct expect *e)
{
	check(d->vendor_id == e->vendor && d->device_id == e->device && d->header_type == e->header_type &&
		      d->cfg_len == e->cfg_len,
	      "%s: vendor %04x device %04x header type %u, %u bytes", name, e->vendor, e->device,
	      e->header_type, e->cfg_len);
	check(d->has_pcie && d->pcie_cap == e->cap && d->pcie_version == e->version &&
		      d->port_type == e->port_type,
	      "%s: PCIe capability v%u at 0x%02x, port type %u (%s)", name, e->version, e->cap, e->port_type,
	      sbx_pcie_port_type_name(e->port_type));
	check(d->mps_supported == e->mps_sup, "%s: MPS supported %u B (got %u)", name, e->mps_sup,
	      d->mps_supported);
	check(d->mps == e->mps, "%s: MPS in use %u B (got %u)", name, e->mps, d->mps);
	check(d->mrrs == e->mrrs, "%s: MRRS %u B (got %u)", name, e->mrrs, d->mrrs);
	check(d->has_link == e->has_link && d->link_speed_max == e->speed_max &&
		      d->link_width_max == e->width_max,
	      "%s: link capability %u/10 GT/s x%u (got %u x%u)", name, e->speed_max, e->width_max,
	      d->link_speed_max, d->link_width_max);
	check(d->link_speed == e->speed && d->link_width == e->width,
	      "%s: link status %u/10 GT/s x%u (got %u x%u)", name, e->speed, e->width, d->link_speed,
	      d->link_width);
}

/* Warnings of @chain are exactly @n, the i-th containing the i-th vararg string. */
static void check_warnings(const char *what, const struct sbx_pcie_info *chain, int len, int n, ...)
{
	char w[16][SBX_PCIE_WARN_LEN];
	int got = sbx_pcie_warnings(chain, len, w, 16), i;
	bool ok = got == n;
	va_list ap;

	for (i = 0; i < got; i++)
		printf("# %s: warning: %s\n", what, w[i]);
	va_start(ap, n);
	for (i = 0; i < n; i++) {
		const char *want = va_arg(ap, const char *);

		ok = ok && i < got && strstr(w[i], want);
	}
	va_end(ap);
	check(ok, "%s: %d warning(s) as expected", what, n);
}

static void test_bdf(void)
{
	static const char *const good[] = {"0000:00:01.0", "0000:3B:00.7", "ffff:ff:1f.7", "10de:0a:1F.0"};
	static const char *const bad[] = {
		"0000:00:20.0", "0000:00:01.8", "00:01.0", "0000:00:01.0/../..", "../../../etc/passwd",
		"0000:00:01.0 ", " 0000:00:01.0", "", "0000:0g:01.0", "0000-00:01.0", "0000:00:01:0",
		"0000:00:1.0", "00000:00:01.0", "0000:00:01.00",
	};
	bool ok = true;
	unsigned int i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ok = ok && sbx_pcie_bdf_valid(good[i]);
	check(ok, "BDF: DDDD:BB:DD.F forms are accepted (either case)");
	ok = !sbx_pcie_bdf_valid(NULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (sbx_pcie_bdf_valid(bad[i]))
			printf("# accepted: '%s'\n", bad[i]);
		ok = ok && !sbx_pcie_bdf_valid(bad[i]);
	}
	check(ok, "BDF: short forms, path tricks, device > 0x1f, function > 7, padding are refused");
}

/* The BDF of a port's devargs: full and short forms, arguments after ',', case. */
static void test_devargs_bdf(void)
{
	static const struct {
		const char *devargs, *bdf; /* bdf NULL: refused */
	} cases[] = {
		{"0000:01:00.0", "0000:01:00.0"}, {"01:00.0", "0000:01:00.0"},
		{"0000:3B:00.1,rxq_cqe_comp_en=0", "0000:3b:00.1"}, {"af:1F.7,x=1", "0000:af:1f.7"},
		{"net_tap0,iface=x", NULL}, {"01:00.8", NULL}, {"1:00.0", NULL}, {"", NULL},
		{"0000:01:00.0.1", NULL},
	};
	char bdf[SBX_PCIE_BDF_LEN];
	unsigned int i;
	bool r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = sbx_pcie_devargs_bdf(cases[i].devargs, bdf);
		check(cases[i].bdf ? r && !strcmp(bdf, cases[i].bdf) : !r, "devargs \"%s\": %s", cases[i].devargs,
		      cases[i].bdf ? cases[i].bdf : "not a PCI address");
	}
}

static void test_fixtures(void)
{
	struct sbx_pcie_info d;

	if (load("mps128.bin", &d)) {
		check_fields("mps128.bin", &d,
			     &(struct expect){0x8086, 0x1572, 0, 4096, 0xa0, 2, 0, 512, 128, 512, true, 80, 8, 80, 8});
		check(caps(&d, 4, 0x01, 0x40, 0x05, 0x50, 0x11, 0x70, 0x10, 0xa0),
		      "mps128.bin: capability list PM, MSI, MSI-X, PCIe");
		check_warnings("mps128.bin", &d, 1, 1, "mps128.bin: MPS is 128 B (device supports 512 B)");
	}
	if (load("mps256.bin", &d)) {
		check_fields("mps256.bin", &d,
			     &(struct expect){0x8086, 0x1572, 0, 4096, 0xa0, 2, 0, 512, 256, 4096, true, 160, 16, 160, 16});
		check_warnings("mps256.bin", &d, 1, 0);
	}
	if (load("mps512.bin", &d)) {
		check_fields("mps512.bin", &d,
			     &(struct expect){0x15b3, 0x101d, 0, 256, 0xa0, 2, 0, 1024, 512, 128, true, 320, 4, 320, 4});
		check(caps(&d, 4, 0x01, 0x40, 0x05, 0x50, 0x11, 0x70, 0x10, 0xa0),
		      "mps512.bin: pointer 0x43 is masked to 0x40");
		check_warnings("mps512.bin", &d, 1, 0);
	}
	if (load("link_degraded.bin", &d)) {
		check_fields("link_degraded.bin", &d,
			     &(struct expect){0x8086, 0x1593, 0, 4096, 0x40, 2, 0, 256, 256, 512, true, 160, 8, 80, 4});
		check(caps(&d, 2, 0x10, 0x40, 0x01, 0x60), "link_degraded.bin: capability list PCIe, PM");
		check_warnings("link_degraded.bin", &d, 1, 2, "link trained at x4 of x8",
			       "link trained at 8 GT/s of 16 GT/s");
	}
	if (load("bridge.bin", &d)) {
		check_fields("bridge.bin", &d,
			     &(struct expect){0x8086, 0x347a, 1, 256, 0x40, 2, 4, 256, 128, 512, true, 160, 16, 160, 16});
		check(!strcmp(sbx_pcie_port_type_name(d.port_type), "Root Port"), "bridge.bin: a Root Port");
		check(caps(&d, 4, 0x10, 0x40, 0x05, 0x80, 0x0d, 0x90, 0x01, 0xa0),
		      "bridge.bin: capability list PCIe, MSI, SSID, PM");
	}
	if (load("rciep.bin", &d)) {
		check_fields("rciep.bin", &d,
			     &(struct expect){0x8086, 0x0b25, 0, 256, 0x40, 2, 9, 128, 128, 512, false, 0, 0, 0, 0});
		check_warnings("rciep.bin: no link, no link warning", &d, 1, 1,
			       "MPS is 128 B (the most the device supports)");
	}
	if (load("no_pcie.bin", &d)) {
		check(!d.has_pcie && caps(&d, 3, 0x09, 0x40, 0x09, 0x50, 0x11, 0x98) && d.mps == 0 &&
			      !d.has_link && d.vendor_id == 0x1af4,
		      "no_pcie.bin: capabilities 09 09 11 walked, no PCI Express capability, no fields");
		check_warnings("no_pcie.bin", &d, 1, 1, "no_pcie.bin: no PCI Express capability");
	}
	if (load("no_caplist.bin", &d))
		check(!d.has_pcie && d.nb_caps == 0,
		      "no_caplist.bin: Status bit 4 clear: the pointer at 0x34 is not followed");
	load_fails("loop.bin", "loops", "0x50");
	load_fails("bad_ptr.bin", "below 0x40", "0x20");
	load_fails("truncated.bin", "truncated", "40 bytes");
	load_fails("header_only.bin", "past the end", "root");
	load_fails("pcie_cut.bin", "cut short", "0xf0");
}

/* Decoding never reads beyond the buffer: every prefix of every fixture, in an exact-size heap
 * buffer (run under valgrind or ASan to catch an overread), decodes or fails with a message. */
static void test_prefixes(void)
{
	static const char *const names[] = {"mps128.bin", "mps512.bin", "link_degraded.bin", "bridge.bin",
					    "no_pcie.bin", "loop.bin"};
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		FILE *f = fopen(fixture(names[i]), "rb");
		uint8_t full[SBX_PCIE_CFG_MAX];
		size_t len = f ? fread(full, 1, sizeof(full), f) : 0, l;
		bool ok = len > 0;
		int full_rc = -2;

		if (f)
			fclose(f);
		for (l = 0; ok && l <= len; l++) {
			uint8_t *b = malloc(l ? l : 1);
			struct sbx_pcie_info d;
			char err[256] = "";
			int rc;

			memcpy(b, full, l);
			rc = sbx_pcie_decode_buf(b, l, &d, err, sizeof(err));
			ok = (rc == 0 || (rc == -1 && err[0])) && (l >= 64 || rc == -1);
			if (l == len)
				full_rc = rc;
			free(b);
		}
		check(ok && full_rc == (strcmp(names[i], "loop.bin") ? 0 : -1),
		      "%s: every prefix 0..%zu bytes decodes or fails with a message", names[i], len);
	}
}

static void test_chains(void)
{
	struct sbx_pcie_info c[3];
	char w[4][SBX_PCIE_WARN_LEN];

	if (!load("mps256.bin", &c[0]) || !load("bridge.bin", &c[1]))
		return;
	/* name them as sbx_pcie_path() would */
	snprintf(c[0].name, sizeof(c[0].name), "0000:01:00.0");
	snprintf(c[1].name, sizeof(c[1].name), "0000:00:01.0");
	check_warnings("chain mps256 + bridge MPS 128", c, 2, 1,
		       "0000:01:00.0: device MPS 256 B differs from bridge 0000:00:01.0 MPS 128 B (TLPs larger "
		       "than the bridge accepts)");
	if (!load("mps128.bin", &c[0]))
		return;
	snprintf(c[0].name, sizeof(c[0].name), "0000:01:00.0");
	/* device 8 GT/s x8 under a 16 GT/s x16 root port: the link runs at what both ends support */
	check_warnings("chain mps128 + bridge: same MPS, x8 link at x8 under an x16 port", c, 2, 1,
		       "MPS is 128 B");
	c[1].mps = 256;
	check_warnings("chain mps128 + bridge at MPS 256: device below its bridge", c, 2, 2, "MPS is 128 B",
		       "0000:01:00.0: device MPS 128 B differs from bridge 0000:00:01.0 MPS 256 B (smaller: "
		       "fine if set so by pci=pcie_bus_perf)");
	c[1].mps = 128;
	if (!load("link_degraded.bin", &c[0]))
		return;
	snprintf(c[0].name, sizeof(c[0].name), "0000:01:00.0");
	check_warnings("chain link_degraded + bridge", c, 2, 3,
		       "0000:01:00.0: link trained at x4 of x8 (this end x8, 0000:00:01.0 x16)",
		       "0000:01:00.0: link trained at 8 GT/s of 16 GT/s (this end 16 GT/s, 0000:00:01.0 16 GT/s)",
		       "0000:01:00.0: device MPS 256 B differs from bridge 0000:00:01.0 MPS 128 B (TLPs larger "
		       "than the bridge accepts)");
	check(sbx_pcie_warnings(c, 2, w, 1) == 1, "warnings stop at max");
	/* a bridge without a PCI Express capability in the path is named */
	if (!load("no_pcie.bin", &c[2]))
		return;
	snprintf(c[2].name, sizeof(c[2].name), "0000:00:1e.0");
	check_warnings("chain with a conventional bridge", c, 3, 4, "x4 of x8", "8 GT/s of 16", "differs",
		       "0000:00:1e.0: no PCI Express capability");
	/* a root port alone with its link trained below its own maximum */
	c[1].link_width = 8;
	check_warnings("root port alone at x8 of x16", &c[1], 1, 2, "0000:00:01.0: MPS is 128 B",
		       "0000:00:01.0: link trained at x8 of x16");
	c[1].link_width = 0;
	check_warnings("root port alone, link down (empty slot): no link warning", &c[1], 1, 1, "MPS is 128 B");
}

static void test_parents(void)
{
	char b[4][SBX_PCIE_BDF_LEN];
	int n;

	n = sbx_pcie_parents("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0", b, 4);
	check(n == 1 && !strcmp(b[0], "0000:00:01.0"), "parents: one root port");
	n = sbx_pcie_parents("/sys/devices/pci0000:00/0000:00:1c.0/0000:02:00.0/0000:03:01.0/0000:04:00.0", b, 4);
	check(n == 3 && !strcmp(b[0], "0000:03:01.0") && !strcmp(b[1], "0000:02:00.0") &&
		      !strcmp(b[2], "0000:00:1c.0"),
	      "parents: switch downstream, switch upstream, root port, nearest first");
	n = sbx_pcie_parents("/sys/devices/pci0000:00/0000:00:1c.0/0000:02:00.0/0000:03:01.0/0000:04:00.0", b, 1);
	check(n == 1 && !strcmp(b[0], "0000:03:01.0"), "parents: max keeps the nearest");
	n = sbx_pcie_parents("/sys/devices/pci0000:00/0000:00:03.0", b, 4);
	check(n == 0, "parents: a device on the root bus has none");
	n = sbx_pcie_parents("/sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/"
			     "fd1d2cbd-ce7c-535c-966b-eb5f811c95f0/pci1234:00/1234:00:02.0", b, 4);
	check(n == 0, "parents: non-PCI path components are skipped");
	check(sbx_pcie_parents("/sys/devices/pci0000:00", b, 4) == -1 && sbx_pcie_parents(NULL, b, 4) == -1,
	      "parents: a path not ending with a BDF is refused");
}

static void test_misc(void)
{
	struct sbx_pcie_info d, chain[2];
	char s[24], err[512];

	check(!strcmp(sbx_pcie_speed_str(25, s, sizeof(s)), "2.5 GT/s") &&
		      !strcmp(sbx_pcie_speed_str(160, s, sizeof(s)), "16 GT/s") &&
		      !strcmp(sbx_pcie_speed_str(640, s, sizeof(s)), "64 GT/s") &&
		      !strcmp(sbx_pcie_speed_str(0, s, sizeof(s)), "unknown"),
	      "speed strings");
	check(!strcmp(sbx_pcie_port_type_name(0), "Endpoint") && !strcmp(sbx_pcie_port_type_name(6),
									   "Switch Downstream Port") &&
		      !strcmp(sbx_pcie_port_type_name(3), "type 3") && !strcmp(sbx_pcie_port_type_name(15), "type 15"),
	      "port type names");
	check(sbx_pcie_read("0000:00:01", &d, err, sizeof(err)) == -1 && strstr(err, "not a PCI address"),
	      "read: neither a BDF nor a path is refused: %s", err);
	check(sbx_pcie_read("/nonexistent/config", &d, err, sizeof(err)) == -1 &&
		      strstr(err, "/nonexistent/config") && strstr(err, "No such file"),
	      "read: a missing file is named: %s", err);
	check(sbx_pcie_read("0000:FF:1F.7", &d, err, sizeof(err)) == -1 &&
		      strstr(err, "/sys/bus/pci/devices/0000:ff:1f.7/config"),
	      "read: a missing BDF names its (lower-case) sysfs file: %s", err);
	check(sbx_pcie_path("../0000:00:00.0", chain, 2, err, sizeof(err)) == -1 &&
		      strstr(err, "not a PCI address"),
	      "path: a BDF with a path trick is refused: %s", err);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s <repo-root>\n", argv[0]);
		return 2;
	}
	root = argv[1];
	test_bdf();
	test_devargs_bdf();
	test_fixtures();
	test_prefixes();
	test_chains();
	test_parents();
	test_misc();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
