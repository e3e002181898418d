#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks of docs/openapi.yaml (needs PyYAML: Debian's python3-yaml).

  openapi_check.py SPEC lint            structure: OpenAPI 3.0.x, every $ref resolves, every
                                        {param} of a path declared, every operation has responses,
                                        every 4xx/5xx answer is the shared Error schema, every
                                        mutating operation has bearerAuth and a 401; problems on
                                        stdout, exit 1 if any
  openapi_check.py SPEC routes          "METHOD PATH" of every operation, one a line (sorted)
  openapi_check.py SPEC validate METHOD PATH STATUS JSONFILE
                                        the JSON answer against the response schema of that
                                        operation and status: types, required fields, enums,
                                        nullable, items, allOf (what this spec uses); problems on
                                        stdout, exit 1 if any
"""
import json
import re
import sys

import yaml

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def resolve(spec, node):
    """Follow $ref chains (local refs only)."""
    seen = 0
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if not ref.startswith("#/"):
            raise KeyError(f"non-local $ref {ref}")
        cur = spec
        for part in ref[2:].split("/"):
            cur = cur[part]
        node = cur
        seen += 1
        if seen > 50:
            raise KeyError(f"$ref loop at {ref}")
    return node


def all_refs(node, path="#"):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref":
                yield path, v
            else:
                yield from all_refs(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from all_refs(v, f"{path}/{i}")


def operations(spec):
    for p, item in (spec.get("paths") or {}).items():
        for m, op in item.items():
            if m in METHODS:
                yield p, m, item, op


def lint(spec):
    bad = []
    if not str(spec.get("openapi", "")).startswith("3.0."):
        bad.append(f"openapi: {spec.get('openapi')!r}, expected 3.0.x")
    for key in ("info", "paths", "components"):
        if key not in spec:
            bad.append(f"missing top-level {key}")
    for where, ref in all_refs(spec):
        try:
            resolve(spec, {"$ref": ref})
        except (KeyError, TypeError) as e:
            bad.append(f"{where}: $ref {ref} does not resolve ({e})")
    schemes = (spec.get("components") or {}).get("securitySchemes") or {}
    if (schemes.get("bearerAuth") or {}).get("scheme") != "bearer":
        bad.append("components.securitySchemes.bearerAuth: not an http bearer scheme")
    err_ref = "#/components/schemas/Error"
    ids = set()
    for p, m, item, op in operations(spec):
        name = f"{m.upper()} {p}"
        params = [resolve(spec, x) for x in (item.get("parameters") or []) + (op.get("parameters") or [])]
        declared = {x.get("name") for x in params if x.get("in") == "path"}
        for x in re.findall(r"\{([^}]+)\}", p):
            if x not in declared:
                bad.append(f"{name}: path parameter {{{x}}} not declared")
        for x in declared - set(re.findall(r"\{([^}]+)\}", p)):
            bad.append(f"{name}: path parameter {x} declared but not in the path")
        oid = op.get("operationId")
        if not oid or oid in ids:
            bad.append(f"{name}: operationId missing or duplicate ({oid})")
        ids.add(oid)
        resps = op.get("responses") or {}
        if not resps:
            bad.append(f"{name}: no responses")
        if not any(str(c).startswith("2") for c in resps):
            bad.append(f"{name}: no 2xx response")
        if "405" not in map(str, resps):
            bad.append(f"{name}: no 405 response (every path answers 405 for other methods)")
        for code, r in resps.items():
            r = resolve(spec, r)
            if "description" not in r:
                bad.append(f"{name} {code}: no description")
            if str(code)[0] in "45":
                sch = ((r.get("content") or {}).get("application/json") or {}).get("schema") or {}
                if sch.get("$ref") != err_ref:
                    bad.append(f"{name} {code}: error answer is not {err_ref}")
        if m not in ("get", "head"):
            sec = op.get("security") or spec.get("security") or []
            if not any("bearerAuth" in s for s in sec):
                bad.append(f"{name}: mutating operation without bearerAuth security")
            if "401" not in map(str, resps):
                bad.append(f"{name}: mutating operation without a 401 response")
    return bad


TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def check(spec, schema, v, where, bad):
    schema = resolve(spec, schema)
    if v is None:
        if not schema.get("nullable") and "allOf" not in schema:
            bad.append(f"{where}: null, but not nullable")
        return
    for sub in schema.get("allOf") or []:
        check(spec, sub, v, where, bad)
    t = schema.get("type")
    if t == "integer":
        if isinstance(v, bool) or not isinstance(v, (int, float)) or float(v) != int(v):
            bad.append(f"{where}: {v!r} is not an integer")
            return
    elif t == "number":
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            bad.append(f"{where}: {v!r} is not a number")
            return
    elif t in TYPES and not isinstance(v, TYPES[t]):
        bad.append(f"{where}: {type(v).__name__}, expected {t}")
        return
    if "enum" in schema and v not in schema["enum"]:
        bad.append(f"{where}: {v!r} not in {schema['enum']}")
    if isinstance(v, dict):
        for k in schema.get("required") or []:
            if k not in v:
                bad.append(f"{where}: required field '{k}' missing")
        props = schema.get("properties") or {}
        for k, x in v.items():
            if k in props:
                check(spec, props[k], x, f"{where}.{k}", bad)
            elif isinstance(schema.get("additionalProperties"), dict):
                check(spec, schema["additionalProperties"], x, f"{where}.{k}", bad)
    if isinstance(v, list):
        if "minItems" in schema and len(v) < schema["minItems"]:
            bad.append(f"{where}: {len(v)} items, at least {schema['minItems']}")
        if "maxItems" in schema and len(v) > schema["maxItems"]:
            bad.append(f"{where}: {len(v)} items, at most {schema['maxItems']}")
        if "items" in schema:
            for i, x in enumerate(v):
                check(spec, schema["items"], x, f"{where}[{i}]", bad)


def validate(spec, method, path, status, doc):
    op = ((spec["paths"].get(path) or {}).get(method.lower()))
    if op is None:
        return [f"{method} {path}: not in the spec"]
    r = (op.get("responses") or {}).get(str(status))
    if r is None:
        return [f"{method} {path}: no response {status} in the spec"]
    r = resolve(spec, r)
    sch = ((r.get("content") or {}).get("application/json") or {}).get("schema")
    if sch is None:
        return [f"{method} {path} {status}: no application/json schema"]
    bad = []
    check(spec, sch, doc, "$", bad)
    return bad


def main():
    spec = yaml.safe_load(open(sys.argv[1]))
    cmd = sys.argv[2]
    if cmd == "lint":
        bad = lint(spec)
    elif cmd == "routes":
        for line in sorted(f"{m.upper()} {p}" for p, m, _, _ in operations(spec)):
            print(line)
        return 0
    elif cmd == "validate":
        method, path, status, f = sys.argv[3:7]
        bad = validate(spec, method, path, status, json.load(open(f)))
    else:
        sys.exit(f"unknown command {cmd}")
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
