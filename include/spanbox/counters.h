/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file counters.h
 * Every traffic counter of the workers and the ports, declared once (VPP's foreach_*_error style). Each list
 * below is an X-macro: SBX_FOREACH_..._COUNTER(_) calls _ once per counter, in struct order, so
 * that the struct field (uint64_t), its JSON key (/api/v1/status, /ports/{name}/stats), its
 * Prometheus family (/metrics), its column in the replay summary (spanbox-primary --replay) and
 * its place in the stats history (mgmt/history.c) all come from one line. A counter added to a
 * list appears everywhere without being written again (tests/unit/test_counters.c checks it).
 *
 * The order of a list is the order of its struct's fields and of the replay summary's columns
 * (rx_packets, tx_packets, drop_packets first, as tests/e2e/20_replay.sh reads them; a counter is
 * added at the end): changing it changes the memzone layout (bump SBX_SHM_VERSION).
 *
 * Columns (all string literals, except the field and the tokens):
 *  - field   member of the struct (struct sbx_port_counters, struct sbx_mirror_counters; for
 *            the worker list an existing uint64_t member of struct sbx_worker_stats, whose layout
 *            shm.h keeps by hand);
 *  - json    key in the JSON answers;
 *  - replay  column of the replay summary (mirror list only: the port list uses the json key);
 *  - prom    Prometheus family name (a counter: ..._total);
 *  - reason  mirror list only: NULL for a family of its own, else the value of label "reason" of
 *            a family shared by several counters (prom names the shared family);
 *  - unit    what one count is ("packets", "bytes", "cycles"...), the history answers it per second;
 *  - hist    token: SERIES (a series of its own in the history, named by the json key; worker and
 *            mirror lists), DROPS (summed into its object's "drops" series) or NONE;
 *  - help    one sentence: the # HELP text of /metrics, and the docstring of the field. No
 *            backslash, no newline (the exposition format would need them escaped).
 *
 * Names that drifted before the lists existed are kept as users and tests know them, and noted
 * beside their line: mirrored_pkts is "mirrored_packets" in JSON, "mirrored" in the replay summary
 * and spanbox_mirror_packets_total in /metrics; runt/oversize have no _packets in JSON; bad_pkts
 * is "bad_packets".
 * The JSON keys and Prometheus names are an interface: never rename one; add a counter instead.
 */
#ifndef SPANBOX_COUNTERS_H
#define SPANBOX_COUNTERS_H

#include <stdint.h>

/**
 * Per worker, per port traffic counters (packets and bytes; bytes are frame bytes without FCS):
 * _(field, json, prom, unit, hist, help). Every frame received is forwarded (tx_pkts of the output
 * port) or dropped (drop_pkts): runt and oversize frames are dropped on their input port and
 * counted in drop_pkts and in their own counter. The port's own "rx_packets"... series of the
 * history are the ethdev counters (struct sbx_port_shm), not these: hist SERIES is not used here.
 */
#define SBX_FOREACH_PORT_COUNTER(_)                                                                         \
	_(rx_pkts, "rx_packets", "spanbox_worker_rx_packets_total", "packets", NONE,                           \
	  "Frames the worker received on the port.") \
	_(tx_pkts, "tx_packets", "spanbox_worker_tx_packets_total", "packets", NONE,                           \
	  "Frames the port's TX queue accepted from the worker.") \
	_(drop_pkts, "drop_packets", "spanbox_worker_drop_packets_total", "packets", DROPS,                    \
	  "Frames the worker freed instead of sending on the port (TX queue full, no route; on the input "     \
	  "port a bad mbuf chain, a runt, an oversize frame).") \
	_(rx_bytes, "rx_bytes", "spanbox_worker_rx_bytes_total", "bytes", NONE,                                \
	  "Bytes the worker received on the port.") \
	_(tx_bytes, "tx_bytes", "spanbox_worker_tx_bytes_total", "bytes", NONE,                                \
	  "Bytes the port's TX queue accepted from the worker.") \
	_(drop_bytes, "drop_bytes", "spanbox_worker_drop_bytes_total", "bytes", NONE,                          \
	  "Bytes of those dropped frames.") \
	/* JSON "runt", Prometheus ..._runt_packets_total */                                                 \
	_(runt, "runt", "spanbox_worker_runt_packets_total", "packets", NONE,                                  \
	  "Frames received on the port shorter than an Ethernet header (14 B), dropped (part of "              \
	  "drop_packets).") \
	_(oversize, "oversize", "spanbox_worker_oversize_packets_total", "packets", NONE,                      \
	  "Frames received on the port longer than its mtu + 22 B, dropped (part of drop_packets).") \
	/* ingress stages (docs/INGRESS.md); every frame they drop is also in drop_packets */                 \
	_(decap_pkts, "decap_packets", "spanbox_worker_decap_packets_total", "packets", NONE,                  \
	  "Tunnelled frames received on the port whose outer headers a decap rule removed.") \
	_(decap_bytes, "decap_bytes", "spanbox_worker_decap_bytes_total", "bytes", NONE,                       \
	  "Bytes of the inner frames those decapsulations delivered.") \
	_(non_tunnel_pass, "non_tunnel_passed", "spanbox_worker_non_tunnel_passed_packets_total", "packets",   \
	  NONE, "Frames matching no decap rule of the port, passed on unchanged (ingress.non_tunnel pass).") \
	_(non_tunnel_drop, "non_tunnel_dropped", "spanbox_worker_non_tunnel_dropped_packets_total", "packets", \
	  NONE, "Frames matching no decap rule of the port, dropped (ingress.non_tunnel drop).") \
	_(decap_bad_short_outer, "decap_malformed_short_outer", "spanbox_worker_decap_malformed_short_outer_total", \
	  "packets", NONE, "Tunnel frames dropped: the outer headers end before the frame does.") \
	_(decap_bad_ip_fragment, "decap_malformed_ip_fragment", "spanbox_worker_decap_malformed_ip_fragment_total", \
	  "packets", NONE, "Outer fragments reassembly gave up on (timeout, full table, overlap, over 8 fragments), dropped.") \
	_(decap_bad_gre, "decap_malformed_gre_unsupported", "spanbox_worker_decap_malformed_gre_unsupported_total", \
	  "packets", NONE, "Tunnel frames dropped: GRE version other than 0, or the routing bit set.") \
	_(decap_bad_vxlan_flags, "decap_malformed_vxlan_flags", "spanbox_worker_decap_malformed_vxlan_flags_total", \
	  "packets", NONE, "VXLAN frames dropped: the I flag is not set.") \
	_(decap_bad_inner_runt, "decap_malformed_inner_runt", "spanbox_worker_decap_malformed_inner_runt_total", \
	  "packets", NONE, "Tunnel frames dropped: the inner frame is shorter than 14 bytes.") \
	_(decap_bad_length, "decap_malformed_length_mismatch", "spanbox_worker_decap_malformed_length_mismatch_total", \
	  "packets", NONE, "Tunnel frames dropped: an outer IP or UDP length larger than the frame.") \
	_(decap_bad_frame_type, "decap_malformed_frame_type", "spanbox_worker_decap_malformed_frame_type_total", \
	  "packets", NONE, "ERSPAN type III frames dropped: a frame type other than Ethernet (0) or IP (2).") \
	_(decap_bad_geneve, "decap_malformed_geneve_header", "spanbox_worker_decap_malformed_geneve_header_total", \
	  "packets", NONE, "GENEVE frames dropped: version other than 0, or a protocol other than Ethernet (0x6558).") \
	_(decap_bad_gtpu, "decap_malformed_gtpu_header", "spanbox_worker_decap_malformed_gtpu_header_total",   \
	  "packets", NONE, "GTP-U frames dropped: version other than 1, GTP', extension headers past the datagram, " \
	  "or a payload that is neither IPv4 nor IPv6.") \
	_(decap_ft_ip, "decap_ip_frames", "spanbox_worker_decap_ip_frames_total", "packets", NONE,              \
	  "ERSPAN type III frames of frame type 2 and GTP-U G-PDUs (IP packets), delivered behind a synthesised " \
	  "Ethernet header.") \
	_(vlan_stripped, "vlan_tags_stripped", "spanbox_worker_vlan_tags_stripped_total", "tags", NONE,        \
	  "802.1Q/802.1ad tags removed by ingress.strip.") \
	_(mpls_stripped, "mpls_labels_stripped", "spanbox_worker_mpls_labels_stripped_total", "labels", NONE,  \
	  "MPLS label stack entries removed by ingress.strip.") \
	_(vntag_stripped, "vntags_stripped", "spanbox_worker_vntags_stripped_total", "tags", NONE,            \
	  "Cisco VN-Tags (EtherType 0x8926) removed by ingress.strip.") \
	_(etag_stripped, "etags_stripped", "spanbox_worker_etags_stripped_total", "tags", NONE,               \
	  "IEEE 802.1BR E-Tags (EtherType 0x893F) removed by ingress.strip.") \
	_(tagged, "tagged_packets", "spanbox_worker_tagged_packets_total", "packets", NONE,                    \
	  "Frames that got the port's ingress.tag VLAN tag.") \
	_(ingress_unwritable, "ingress_unwritable", "spanbox_worker_ingress_unwritable_packets_total", "packets", \
	  NONE, "Frames an ingress stage had to change but could not (a shared buffer, no headroom), dropped.") \
	_(dedup_unique, "dedup_unique", "spanbox_worker_dedup_unique_packets_total", "packets", NONE,          \
	  "Frames the dedup stage had not seen within its window: passed on.") \
	_(dedup_dup, "dedup_duplicates", "spanbox_worker_dedup_duplicate_packets_total", "packets", NONE,      \
	  "Frames dropped as duplicates of one seen within the dedup window.") \
	_(dedup_counted, "dedup_duplicates_passed", "spanbox_worker_dedup_duplicates_passed_packets_total",     \
	  "packets", NONE, "Duplicates found in dedup action count: counted and passed on, not dropped.") \
	_(dedup_evict, "dedup_evictions", "spanbox_worker_dedup_evictions_total", "entries", NONE,             \
	  "Dedup table entries younger than the window overwritten for want of room.") \
	_(tunnels_untracked, "tunnels_untracked", "spanbox_worker_tunnels_untracked_packets_total", "packets",  \
	  NONE, "Decapsulated frames of a tunnel sender the worker does not follow: its sender table was full " \
	  "(workers.tunnel_senders.entries).") \
	_(tunnel_senders_expired, "tunnel_senders_expired", "spanbox_worker_tunnel_senders_expired_total",     \
	  "senders", NONE, "Tunnel senders the worker dropped from its table after workers.tunnel_senders.idle_s " \
	  "without a frame.") \
	_(reasm_fragments, "reassembly_fragments", "spanbox_worker_reassembly_fragments_total", "packets", NONE, \
	  "Outer IP fragments of GRE or UDP a decap rule of the port could concern, handed to reassembly.") \
	_(reasm_datagrams, "reassembly_datagrams", "spanbox_worker_reassembly_datagrams_total", "packets", NONE, \
	  "Datagrams reassembled from those fragments, then decapsulated or passed as one frame.") \
	/* timestamps in (ingress.timestamp, include/spanbox/ts_in.h) */                                    \
	_(ts_in_pkts, "timestamps_in", "spanbox_worker_timestamps_in_packets_total", "packets", NONE,          \
	  "Frames whose AVSP header or Metamako trailer was removed, their time kept for the recorder.") \
	_(ts_in_absent, "timestamp_absent", "spanbox_worker_timestamp_absent_packets_total", "packets", NONE,  \
	  "Frames on an arista timestamp port without an AVSP header after the MACs, passed unchanged.") \
	_(ts_in_bad_short, "timestamp_malformed_short", "spanbox_worker_timestamp_malformed_short_total",      \
	  "packets", NONE, "Frames dropped: an AVSP header cut short, or too short for a trailer and an Ethernet header.") \
	_(ts_in_bad_subtype, "timestamp_malformed_subtype", "spanbox_worker_timestamp_malformed_subtype_total", \
	  "packets", NONE, "Frames dropped: an AVSP header of a subtype other than 1 (timestamp).") \
	_(ts_in_bad_version, "timestamp_malformed_version", "spanbox_worker_timestamp_malformed_version_total", \
	  "packets", NONE, "Frames dropped: an AVSP timestamp header of an unknown version.") \
	_(ts_in_bad_implausible, "timestamp_malformed_implausible",                                           \
	  "spanbox_worker_timestamp_malformed_implausible_total", "packets", NONE,                            \
	  "Frames dropped: a time that fails the plausibility test (nanoseconds of 10^9 or more; Metamako: "  \
	  "seconds outside the window around our clock, extensions past the frame).")

/**
 * Per worker, per mirror session counters: _(field, json, replay, prom, reason, unit, hist, help).
 * The three drop_* counters are one Prometheus family, spanbox_mirror_dropped_packets_total, with
 * label reason (SBX_MIRROR_DROPPED_HELP), and one "drops" series of the history.
 */
#define SBX_FOREACH_MIRROR_COUNTER(_)                                                                       \
	/* JSON "mirrored_packets", replay "mirrored", Prometheus spanbox_mirror_packets_total */           \
	_(mirrored_pkts, "mirrored_packets", "mirrored", "spanbox_mirror_packets_total", NULL, "packets",      \
	  SERIES, "Mirror frames the destination TX queue accepted.") \
	_(copied, "copied", "copied", "spanbox_mirror_copied_packets_total", NULL, "packets", NONE,            \
	  "Mirror copies made by deep copy.") \
	_(shared, "shared", "shared", "spanbox_mirror_shared_packets_total", NULL, "packets", NONE,            \
	  "Mirror copies made by sharing the frame (indirect mbuf plus header mbuf).") \
	_(filtered_out, "filtered_out", "filtered_out", "spanbox_mirror_filtered_out_packets_total", NULL,     \
	  "packets", NONE, "Source frames the session's filter rejected.") \
	_(sampled_out, "sampled_out", "sampled_out", "spanbox_mirror_sampled_out_packets_total", NULL,         \
	  "packets", NONE, "Source frames skipped by 1-in-N sampling.") \
	_(drop_txfull, "drop_txfull", "drop_txfull", "spanbox_mirror_dropped_packets_total", "txfull",         \
	  "packets", DROPS, "Mirror copies the destination TX queue refused (freed).") \
	_(drop_nombuf, "drop_nombuf", "drop_nombuf", "spanbox_mirror_dropped_packets_total", "nombuf",         \
	  "packets", DROPS, "Mirror copies not made: the pool was empty.") \
	_(truncated, "truncated", "truncated", "spanbox_mirror_truncated_packets_total", NULL, "packets",      \
	  NONE, "Mirror copies cut: at the snaplen, or to fit the destination's MTU (oversize truncate).") \
	_(tx_oversize, "tx_oversize", "tx_oversize", "spanbox_mirror_oversize_packets_total", NULL, "packets",  \
	  NONE, "Mirror copies longer than the destination's MTU allows: cut to fit (oversize truncate, also " \
	  "counted in truncated) or not made (oversize drop).") \
	_(drop_malformed, "drop_malformed", "drop_malformed", "spanbox_mirror_dropped_packets_total",          \
	  "malformed", "packets", DROPS,                                                                     \
	  "Mirror copies not made: the frame cannot carry the encapsulation (RSPAN of a frame shorter than "   \
	  "its two MACs, a chain over the segment limit).") \
	_(masked, "masked", "masked", "spanbox_mirror_masked_packets_total", NULL, "packets", NONE,            \
	  "Mirror copies in which the session's mask overwrote at least one byte.") \
	_(mask_short, "mask_short", "mask_short", "spanbox_mirror_mask_short_packets_total", NULL, "packets",  \
	  NONE, "Copies whose frame ends before the mask's region does: masked to its end (not at all when it "  \
	  "ends before the region starts).") \
	_(mask_no_anchor, "mask_no_anchor", "mask_no_anchor", "spanbox_mirror_mask_no_anchor_packets_total",   \
	  NULL, "packets", NONE, "Copies made unmasked: the frame has no header the mask's offset counts from "  \
	  "(no IP header for l3, no IP payload for l4).") \
	_(mirrored_bytes, "mirrored_bytes", "mirrored_bytes", "spanbox_mirror_bytes_total", NULL, "bytes",     \
	  SERIES, "Bytes of those mirror frames, encapsulation included.")                                   \
	_(timestamped, "timestamped", "timestamped", "spanbox_mirror_timestamped_packets_total", NULL,         \
	  "packets", NONE, "Mirror copies made with a timestamp (the session's timestamp.format).")

/**
 * Per worker, per tool group member counters (docs/CONFIG.md "tool_groups"):
 * _(field, json, prom, reason, unit, help). The two drop_* counters are one Prometheus family,
 * spanbox_tool_group_member_dropped_packets_total, with label reason.
 */
#define SBX_FOREACH_GROUP_MEMBER_COUNTER(_)                                                                 \
	_(packets, "packets", "spanbox_tool_group_member_packets_total", NULL, "packets",                      \
	  "Mirror copies the member's TX queue accepted.")                                                   \
	_(bytes, "bytes", "spanbox_tool_group_member_bytes_total", NULL, "bytes",                              \
	  "Bytes of those copies, encapsulation included.")                                                  \
	_(drop_rate_limit, "drop_rate_limit", "spanbox_tool_group_member_dropped_packets_total", "rate_limit", \
	  "packets", "Copies for the member dropped by its rate limit (member_rate_limit).")                \
	_(drop_txfull, "drop_txfull", "spanbox_tool_group_member_dropped_packets_total", "txfull", "packets",  \
	  "Copies the member's TX queue refused (freed).")

/**
 * Per worker, per tool group counters beyond the sums of its members: _(field, json, prom, unit, help).
 */
#define SBX_FOREACH_GROUP_COUNTER(_)                                                                        \
	_(no_member, "no_member", "spanbox_tool_group_no_member_packets_total", "packets",                     \
	  "Copies for the group dropped because no member was up.")

/** # HELP of spanbox_tool_group_member_dropped_packets_total. */
#define SBX_GROUP_MEMBER_DROPPED_HELP                                                                       \
	"Tool group member copies lost, by reason: rate_limit (member_rate_limit), txfull (TX queue refused it)."

/** # HELP of spanbox_mirror_dropped_packets_total, the family the mirror counters with a reason share. */
#define SBX_MIRROR_DROPPED_HELP                                                                             \
	"Mirror copies lost, by reason: txfull (destination TX queue refused it), nombuf (pool empty), "     \
	"malformed (the frame cannot carry the encapsulation)."

/**
 * The flow metering counters of struct sbx_worker_stats (secondary/flows.c, docs/FLOWS.md), part of
 * SBX_FOREACH_WORKER_COUNTER (its last lines); GET /api/v1/flows lists them per worker too.
 */
#define SBX_FOREACH_WORKER_FLOW_COUNTER(_)                                                                  \
	_(flows_frames, "flows_metered_frames", "spanbox_worker_flows_metered_frames_total", "packets", NONE,  \
	  "Frames of metered ports counted into flows (IPv4 and IPv6, after the ingress stages).")          \
	_(flows_non_ip, "flows_non_ip", "spanbox_worker_flows_non_ip_frames_total", "packets", NONE,          \
	  "Frames of metered ports not metered: not IPv4/IPv6, or an IP header cut short.")                 \
	_(flows_created, "flows_created", "spanbox_worker_flows_created_total", "flows", NONE,                \
	  "Flows the worker's flow table created.")                                                         \
	_(flows_expired_idle, "flows_expired_idle", "spanbox_worker_flows_expired_idle_total", "flows", NONE, \
	  "Flow records that left the table at the idle timeout.")                                          \
	_(flows_expired_active, "flows_expired_active", "spanbox_worker_flows_expired_active_total", "flows",  \
	  NONE, "Flow records that left the table at the active timeout.")                                  \
	_(flows_expired_end, "flows_expired_end", "spanbox_worker_flows_expired_end_total", "flows", NONE,    \
	  "Flow records that left the table at a TCP FIN or RST.")                                          \
	_(flows_expired_forced, "flows_expired_forced", "spanbox_worker_flows_expired_forced_total", "flows",  \
	  NONE, "Flow records flushed at a graceful stop of the worker (forced end).")                      \
	_(flows_evicted_full, "flows_evicted_full", "spanbox_worker_flows_evicted_full_total", "flows", NONE, \
	  "Flow records pushed out early by a full table (flows.flows_per_worker), reason lack of resources.") \
	_(flows_records_queued, "flows_records_queued", "spanbox_worker_flows_records_queued_total", "records", \
	  NONE, "Flow records the worker put on its ring to the primary's IPFIX exporter.")                 \
	_(flows_lost_ring, "flows_records_lost_ring", "spanbox_worker_flows_records_lost_ring_total", "records", \
	  NONE, "Flow records lost because the ring to the exporter was full.")                             \
	_(flows_lost_killed, "flows_records_lost_killed", "spanbox_worker_flows_records_lost_killed_total",   \
	  "flows", NONE, "Flows a killed worker process left in its table, never exported.")

/**
 * The uint64_t counters of struct sbx_worker_stats (shm.h keeps that struct's fields and their
 * order by hand, for its cache-line layout): _(field, json, prom, unit, hist, help). Fields of the
 * struct that are not counters (heartbeat_ns, tables_gen, held, first_rx_ns) are not listed.
 */
#define SBX_FOREACH_WORKER_COUNTER(_)                                                                       \
	_(loops, "loops", "spanbox_worker_loops_total", "loops", NONE, "Poll loops the worker ran.")          \
	_(idle_sleeps, "idle_sleeps", "spanbox_worker_idle_sleeps_total", "sleeps", NONE,                      \
	  "Idle back-off sleeps of the worker.")                                                             \
	_(busy_cycles, "busy_cycles", "spanbox_worker_busy_cycles_total", "cycles", SERIES,                    \
	  "TSC cycles the worker spent in loops that received frames.")                                      \
	_(busy_pkts, "busy_packets", "spanbox_worker_busy_packets_total", "packets", NONE,                     \
	  "Frames handled in those loops.")                                                                  \
	_(busy_loops, "busy_loops", "spanbox_worker_busy_loops_total", "loops", NONE,                          \
	  "Loops that received frames (busy_packets / busy_loops: the mean burst).")                         \
	/* JSON "bad_packets" */                                                                             \
	_(bad_pkts, "bad_packets", "spanbox_worker_bad_packets_total", "packets", NONE,                        \
	  "Mbufs dropped because their chain was inconsistent.")                                             \
	_(tables_errors, "tables_errors", "spanbox_worker_tables_errors_total", "errors", NONE,                \
	  "Runtime tables the worker could not take (it mirrors nothing since).")                            \
	/* maps (secondary/maps_stage.c, docs/MAPS.md) */                                                    \
	_(maps_classified, "maps_classified_frames", "spanbox_worker_maps_classified_frames_total", "packets", \
	  NONE, "Frames the maps stage looked up in a port's rule tables (one per frame and direction).")      \
	SBX_FOREACH_WORKER_FLOW_COUNTER(_)

/**
 * The ethdev counters of a port, as the primary copies them every 100 ms into struct sbx_port_shm
 * (fields kept by hand in shm.h; each has the name of its struct rte_eth_stats member, which is
 * also its key in /status ports[].stats): _(field, key, prom, unit, hist, help). key is the name
 * in /ports/{name}/stats and of the port's history series (SERIES); the DROPS ones are summed,
 * with the workers' drop_packets, into the port's "drops" series.
 */
#define SBX_FOREACH_ETHDEV_COUNTER(_)                                                                       \
	_(ipackets, "rx_packets", "spanbox_port_rx_packets_total", "packets", SERIES,                          \
	  "Frames the port received (ethdev ipackets; pcap port: frames read from its file).")               \
	_(opackets, "tx_packets", "spanbox_port_tx_packets_total", "packets", SERIES,                          \
	  "Frames the port sent (ethdev opackets; pcap port: frames written to its file).")                  \
	_(ibytes, "rx_bytes", "spanbox_port_rx_bytes_total", "bytes", SERIES, "Bytes the port received (ethdev ibytes).") \
	_(obytes, "tx_bytes", "spanbox_port_tx_bytes_total", "bytes", SERIES, "Bytes the port sent (ethdev obytes).") \
	/* /ports/{name}/stats "rx_missed", Prometheus ..._rx_missed_packets_total */                       \
	_(imissed, "rx_missed", "spanbox_port_rx_missed_packets_total", "packets", DROPS,                      \
	  "Frames the port dropped because its RX queues were full (ethdev imissed).")                       \
	_(ierrors, "rx_errors", "spanbox_port_rx_errors_total", "packets", DROPS,                              \
	  "Erroneous frames received (ethdev ierrors).")                                                     \
	_(oerrors, "tx_errors", "spanbox_port_tx_errors_total", "packets", DROPS,                              \
	  "Frames the port failed to send (ethdev oerrors).")                                                \
	_(rx_nombuf, "rx_nombuf", "spanbox_port_rx_nombuf_total", "packets", DROPS,                            \
	  "RX mbuf allocation failures: the pool was empty (ethdev rx_nombuf).")

/* hist tokens: SBX_IF_SERIES(hist, ...) is ... for SERIES, nothing else; SBX_IF_DROPS alike. */
#define SBX_IF_SERIES(hist, ...) SBX_IF_SERIES_##hist(__VA_ARGS__)
#define SBX_IF_SERIES_SERIES(...) __VA_ARGS__
#define SBX_IF_SERIES_DROPS(...)
#define SBX_IF_SERIES_NONE(...)
#define SBX_IF_DROPS(hist, ...) SBX_IF_DROPS_##hist(__VA_ARGS__)
#define SBX_IF_DROPS_SERIES(...)
#define SBX_IF_DROPS_DROPS(...) __VA_ARGS__
#define SBX_IF_DROPS_NONE(...)

#define SBX_CTR_FIELD_(field, ...) uint64_t field;

/** Per worker, per port traffic counters: one uint64_t per line of SBX_FOREACH_PORT_COUNTER. */
struct sbx_port_counters {
	SBX_FOREACH_PORT_COUNTER(SBX_CTR_FIELD_)
};

/** Per worker, per mirror session counters: one uint64_t per line of SBX_FOREACH_MIRROR_COUNTER. */
struct sbx_mirror_counters {
	SBX_FOREACH_MIRROR_COUNTER(SBX_CTR_FIELD_)
};

/**
 * Per worker, per map counters beyond its session's mirror counters (secondary/maps_stage.c,
 * docs/MAPS.md): _(field, json, prom, unit, help).
 */
#define SBX_FOREACH_MAP_COUNTER(_)                                                                          \
	_(passed, "passed", "spanbox_map_passed_packets_total", "packets",                                     \
	  "Frames of the map's sources its rules passed (a collector: that no other map passed), before its "  \
	  "filter and sampling.")

/** Per worker, per map counters: one uint64_t per line of SBX_FOREACH_MAP_COUNTER. */
struct sbx_map_counters {
	SBX_FOREACH_MAP_COUNTER(SBX_CTR_FIELD_)
};

/** Per worker, per tool group member counters: one uint64_t per line of SBX_FOREACH_GROUP_MEMBER_COUNTER. */
struct sbx_group_member_counters {
	SBX_FOREACH_GROUP_MEMBER_COUNTER(SBX_CTR_FIELD_)
};

/** Per worker, per tool group counters: one uint64_t per line of SBX_FOREACH_GROUP_COUNTER. */
struct sbx_group_counters {
	SBX_FOREACH_GROUP_COUNTER(SBX_CTR_FIELD_)
};

#define SBX_CTR_ADD_(field, ...) sum->field += c->field;

/** Add every counter of @p c to @p sum (the caller zeroes @p sum first). */
static inline void sbx_group_member_counters_add(struct sbx_group_member_counters *sum,
						 const struct sbx_group_member_counters *c)
{
	SBX_FOREACH_GROUP_MEMBER_COUNTER(SBX_CTR_ADD_)
}


/** Add every counter of @p c to @p sum (the caller zeroes @p sum first). */
static inline void sbx_port_counters_add(struct sbx_port_counters *sum, const struct sbx_port_counters *c)
{
	SBX_FOREACH_PORT_COUNTER(SBX_CTR_ADD_)
}

/** Add every counter of @p c to @p sum (the caller zeroes @p sum first). */
static inline void sbx_mirror_counters_add(struct sbx_mirror_counters *sum, const struct sbx_mirror_counters *c)
{
	SBX_FOREACH_MIRROR_COUNTER(SBX_CTR_ADD_)
}

#define SBX_CTR_ONE_(...) +1
/** Counters in each list. */
enum {
	SBX_NB_ETHDEV_COUNTERS = 0 SBX_FOREACH_ETHDEV_COUNTER(SBX_CTR_ONE_),
	SBX_NB_PORT_COUNTERS = 0 SBX_FOREACH_PORT_COUNTER(SBX_CTR_ONE_),
	SBX_NB_MIRROR_COUNTERS = 0 SBX_FOREACH_MIRROR_COUNTER(SBX_CTR_ONE_),
	SBX_NB_WORKER_COUNTERS = 0 SBX_FOREACH_WORKER_COUNTER(SBX_CTR_ONE_),
};

/**
 * The counters of one IPFIX exporter (shared/ipfix.c, struct sbx_ipfix_stats below), as the
 * primary's exporter thread publishes them per collector (shm->flows.collectors[i].x, and
 * shm->flows.retired for collectors a live change replaced): _(field, json, prom, unit, help).
 * json is the key in GET /api/v1/flows collectors[] and retired; prom the /metrics family
 * (label collector="i", address, port, transport; retired: collector="retired").
 */
#define SBX_FOREACH_IPFIX_COUNTER(_)                                                                        \
	_(records_sent, "records_sent", "spanbox_flows_collector_records_sent_total", "records",              \
	  "IPFIX data records in messages the collector's socket took.")                                    \
	_(records_lost, "records_lost", "spanbox_flows_collector_records_lost_total", "records",              \
	  "IPFIX data records lost for the collector: not connected, socket full, send error.")             \
	_(messages_sent, "messages_sent", "spanbox_flows_collector_messages_sent_total", "messages",          \
	  "IPFIX messages the collector's socket took.")                                                    \
	_(messages_lost, "messages_lost", "spanbox_flows_collector_messages_lost_total", "messages",          \
	  "IPFIX messages lost for the collector.")                                                         \
	_(template_sends, "template_sends", "spanbox_flows_collector_template_sends_total", "messages",       \
	  "IPFIX messages that carried the templates.")                                                     \
	_(connects, "connects", "spanbox_flows_collector_connects_total", "connections",                     \
	  "TCP connections made to the collector.")                                                         \
	_(connect_failures, "connect_failures", "spanbox_flows_collector_connect_failures_total", "connections", \
	  "TCP connects to the collector refused or timed out.")                                            \
	_(disconnects, "disconnects", "spanbox_flows_collector_disconnects_total", "connections",            \
	  "TCP connections to the collector lost (peer closed, reset, stalled write).")                     \
	_(send_errors, "send_errors", "spanbox_flows_collector_send_errors_total", "errors",                 \
	  "send() errors (UDP: an ICMP port unreachable comes back as one).")

/** What an IPFIX exporter counted (monotonic), one uint64_t per line of SBX_FOREACH_IPFIX_COUNTER. */
struct sbx_ipfix_stats {
	SBX_FOREACH_IPFIX_COUNTER(SBX_CTR_FIELD_)
};

/** Add every counter of @p c to @p sum. */
static inline void sbx_ipfix_stats_add(struct sbx_ipfix_stats *sum, const struct sbx_ipfix_stats *c)
{
	SBX_FOREACH_IPFIX_COUNTER(SBX_CTR_ADD_)
}

#endif
