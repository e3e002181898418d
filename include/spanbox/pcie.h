/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pcie.h
 * Read-only decoder of a PCI device's configuration space: the capability list, then the PCI
 * Express capability (MaxPayloadSize, Max Read Request Size, link speed and width, port type), for
 * a device and every bridge above it up to its root port (docs/DIAGNOSTICS.md).
 *
 * Sources:
 *  - PCI Express Base Specification (revisions 4.0 to 6.0), section 7.5.1.1 (Type 0/Type 1 common
 *    configuration space: Status register bit 4 "Capabilities List", Header Type at 0x0E,
 *    Capabilities Pointer at 0x34) and section 7.5.3 (PCI Express Capability Structure):
 *    7.5.3.2 PCI Express Capabilities register (cap+0x02), 7.5.3.3 Device Capabilities (cap+0x04),
 *    7.5.3.4 Device Control (cap+0x08), 7.5.3.6 Link Capabilities (cap+0x0C), 7.5.3.8 Link Status
 *    (cap+0x12).
 *  - PCI Local Bus Specification 3.0, section 6.7 (Capabilities List: capability ID byte, next
 *    pointer byte; the two low bits of a pointer are reserved and masked by software; a pointer of
 *    0 ends the list; capabilities live at 0x40..0xFF).
 *
 * Config space is only ever read (files opened O_RDONLY): nothing here writes to a device.
 * Reading /sys/bus/pci/devices/BDF/config as a non-root user returns only the first 64 bytes
 * (the header), which has no capabilities: decoding then fails with an error saying so.
 */
#ifndef SPANBOX_PCIE_H
#define SPANBOX_PCIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SBX_PCIE_CFG_MAX 4096      /**< bytes of (extended) config space read at most */
#define SBX_PCIE_CFG_HDR 64        /**< bytes of the standard header (type 0 and 1) */
#define SBX_PCIE_BDF_LEN 13        /**< "DDDD:BB:DD.F" plus NUL */
#define SBX_PCIE_NAME_LEN 256      /**< sbx_pcie_info.name, NUL included */
#define SBX_PCIE_MAX_CAPS 48       /**< capabilities recorded (the list can hold at most 48) */
#define SBX_PCIE_MAX_CHAIN 16      /**< device plus bridges that sbx_pcie_path() can return */
#define SBX_PCIE_WARN_LEN 160      /**< one warning string, NUL included */
#define SBX_PCIE_CAP_ID_EXP 0x10   /**< capability ID of the PCI Express capability */

/** Device/Port Type, PCI Express Capabilities register bits 7:4 (7.5.3.2). */
enum sbx_pcie_port_type {
	SBX_PCIE_TYPE_ENDPOINT = 0x0,        /**< PCI Express Endpoint */
	SBX_PCIE_TYPE_LEGACY_ENDPOINT = 0x1, /**< Legacy PCI Express Endpoint */
	SBX_PCIE_TYPE_ROOT_PORT = 0x4,       /**< Root Port of a Root Complex */
	SBX_PCIE_TYPE_UPSTREAM = 0x5,        /**< Upstream Port of a Switch */
	SBX_PCIE_TYPE_DOWNSTREAM = 0x6,      /**< Downstream Port of a Switch */
	SBX_PCIE_TYPE_PCIE_TO_PCI = 0x7,     /**< PCI Express to PCI/PCI-X Bridge */
	SBX_PCIE_TYPE_PCI_TO_PCIE = 0x8,     /**< PCI/PCI-X to PCI Express Bridge */
	SBX_PCIE_TYPE_RCIEP = 0x9,           /**< Root Complex Integrated Endpoint (no link) */
	SBX_PCIE_TYPE_RCEC = 0xA,            /**< Root Complex Event Collector (no link) */
};

/** One decoded device (or bridge). Sizes in bytes, speeds in tenths of GT/s, widths in lanes. */
struct sbx_pcie_info {
	char name[SBX_PCIE_NAME_LEN]; /**< the BDF, or the file path it was read from */
	char bdf[SBX_PCIE_BDF_LEN];   /**< "DDDD:BB:DD.F" when read from sysfs, "" for a plain file */
	uint32_t cfg_len;             /**< bytes of config space that were read */
	uint16_t vendor_id;           /**< 0x00 */
	uint16_t device_id;           /**< 0x02 */
	uint8_t header_type;          /**< 0x0E bits 6:0: 0 = device, 1 = PCI-PCI bridge, 2 = CardBus */
	uint8_t nb_caps;              /**< entries used in cap_ids / cap_offsets */
	uint8_t cap_ids[SBX_PCIE_MAX_CAPS];     /**< capability IDs in list order */
	uint8_t cap_offsets[SBX_PCIE_MAX_CAPS]; /**< their offsets */
	bool has_pcie;                /**< a PCI Express capability (ID 0x10) is in the list */
	/* The fields below are 0 when !has_pcie. */
	uint8_t pcie_cap;             /**< offset of the PCI Express capability */
	uint8_t pcie_version;         /**< Capability Version, cap+0x02 bits 3:0 */
	uint8_t port_type;            /**< Device/Port Type, cap+0x02 bits 7:4 (enum sbx_pcie_port_type) */
	uint32_t mps_supported;       /**< Max_Payload_Size Supported, cap+0x04 bits 2:0; bytes (0 = reserved code) */
	uint32_t mps;                 /**< Max_Payload_Size in use, cap+0x08 bits 7:5; bytes (0 = reserved code) */
	uint32_t mrrs;                /**< Max_Read_Request_Size, cap+0x08 bits 14:12; bytes (0 = reserved code) */
	bool has_link;                /**< link registers are defined (not an RCiEP or RCEC) */
	uint16_t link_speed_max;      /**< Max Link Speed, cap+0x0C bits 3:0; GT/s x 10 (0 = unknown code) */
	uint8_t link_width_max;       /**< Maximum Link Width, cap+0x0C bits 9:4; lanes */
	uint16_t link_speed;          /**< Current Link Speed, cap+0x12 bits 3:0; GT/s x 10 (0 = unknown code) */
	uint8_t link_width;           /**< Negotiated Link Width, cap+0x12 bits 9:4; lanes (0 = link down) */
	uint8_t link_speed_max_code;  /**< raw Max Link Speed code */
	uint8_t link_speed_code;      /**< raw Current Link Speed code */
};

/**
 * True when @p s is exactly a PCI address "DDDD:BB:DD.F": 4, 2 and 2 hex digits, device <= 0x1f,
 * function 0..7. Nothing else (no "..", no "/", no short forms) is accepted, so a valid BDF is
 * always safe to put in a sysfs path.
 */
bool sbx_pcie_bdf_valid(const char *s);

/**
 * The PCI address of a port's DPDK devargs ("0000:01:00.0,key=value" or the short "01:00.0",
 * domain 0000), lower-cased as sysfs names devices, into @p bdf.
 * @return true when it is a valid BDF (sbx_pcie_bdf_valid()), false otherwise (@p bdf undefined).
 */
bool sbx_pcie_devargs_bdf(const char *devargs, char bdf[SBX_PCIE_BDF_LEN]);

/**
 * Decode @p len bytes of config space at @p cfg (never reads beyond cfg + len).
 * Walks the capability list from the Capabilities Pointer (0x34 for header types 0 and 1, 0x14
 * for type 2) when Status bit 4 is set, recording every capability, and decodes the PCI Express
 * capability when it is present. A device without one is not an error (has_pcie = false).
 * @p out->name and @p out->bdf are left untouched.
 * @return 0, or -1 with a message in @p err: truncated data (fewer than 64 bytes, a capability or
 *         the PCI Express registers past the end), a device that does not respond (vendor ID
 *         0xFFFF), an unknown header type, a pointer below 0x40, a capability list that loops.
 */
int sbx_pcie_decode_buf(const uint8_t *cfg, size_t len, struct sbx_pcie_info *out, char *err,
			size_t errlen);

/**
 * Read and decode one device. @p bdf_or_path is either a BDF (sbx_pcie_bdf_valid()), read from
 * /sys/bus/pci/devices/BDF/config, or a file path containing a '/' (a fixture, a saved dump);
 * anything else is refused. Sets name (and bdf for a BDF).
 * @return 0, or -1 with a message naming the device or file in @p err.
 */
int sbx_pcie_read(const char *bdf_or_path, struct sbx_pcie_info *out, char *err, size_t errlen);

/**
 * The PCI bridges above a device, nearest first, from its sysfs path: every path component of
 * @p devpath (e.g. realpath of /sys/bus/pci/devices/BDF,
 * "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0") that is a BDF, except the last one (the
 * device), in reverse order. Components that are not BDFs (pci0000:00, platform nodes) are skipped.
 * @return number of bridges written to @p bridges (at most @p max), or -1 when the last component
 *         is not a BDF.
 */
int sbx_pcie_parents(const char *devpath, char bridges[][SBX_PCIE_BDF_LEN], int max);

/**
 * Decode device @p bdf, then each bridge above it up to its root port (sbx_pcie_parents() of
 * realpath(/sys/bus/pci/devices/BDF)), into chain[0] (the device), chain[1] (its parent bridge)...
 * @return number of entries (>= 1, at most @p max), or -1 with a message naming the device or
 *         bridge that could not be read.
 */
int sbx_pcie_path(const char *bdf, struct sbx_pcie_info chain[], int max, char *err, size_t errlen);

/**
 * Warnings for a chain (chain[0] the device, then its bridges; a chain of one is fine), each
 * prefixed by the name of the entry it is about:
 *  - "no PCI Express capability" for an entry without one;
 *  - "MPS is 128 B (...)" for the device when its Max_Payload_Size in use is 128 B;
 *  - "device MPS 256 B differs from bridge 0000:00:01.0 MPS 128 B (...)" for each bridge whose
 *    MPS in use differs from the device's (the note says whether the device's is larger, which
 *    is never right, or smaller, which Linux's pci=pcie_bus_perf does on purpose);
 *  - "link trained at x4 of x8" and "link trained at 8 GT/s of 16 GT/s" when a link runs below
 *    what both of its ends support (an upstream-facing port and the downstream port above it are
 *    two ends of one link: that link is reported once, at the lower end).
 * @return number of warnings written to @p warn (at most @p max).
 */
int sbx_pcie_warnings(const struct sbx_pcie_info chain[], int n, char warn[][SBX_PCIE_WARN_LEN],
		      int max);

/** Name of a Device/Port Type ("Endpoint", "Root Port", ...; "type N" for reserved values). */
const char *sbx_pcie_port_type_name(uint8_t port_type);

/** Format a speed in tenths of GT/s: 25 -> "2.5 GT/s", 160 -> "16 GT/s", 0 -> "unknown". */
const char *sbx_pcie_speed_str(uint16_t gts10, char *buf, size_t len);

#endif /* SPANBOX_PCIE_H */
