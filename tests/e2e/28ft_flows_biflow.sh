#!/usr/bin/env bash
# Biflows (RFC 5103, flows.biflow, docs/FLOWS.md "Biflows"): 28_flows_ipfix.sh in its --biflow
# mode (sbx-flows-pcap --biflow against tests/lib/flows_ref.py --biflow, nfdump's reverse counters,
# tshark's biflow templates and reverse counts; what it checks is said there). UDP 19121 (nfcapd).
exec bash "$(dirname "$0")/28_flows_ipfix.sh" --biflow
