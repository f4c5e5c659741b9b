#!/usr/bin/env python3
"""Checks every answer the integration tests received against its method's result schema.

    Tests/schema/answers.py ANSWERS [OPENRPC]

ANSWERS is the file of `{"method", "result"}` lines the tests write (SAVINGSD_ANSWERS, see
Tests/IntegrationTests/AnswerLog.swift); OPENRPC the committed `rpc.discover` document
(docs/openrpc.json, kept equal to the daemon's by ProtocolDocTests).

Each result schema must itself be a valid JSON Schema (draft 7, as OpenRPC 1.2 says). For the
check every object schema that lists its properties is closed (additionalProperties: false), so
a field the daemon sends and the schema does not name fails here, while the published document
stays open to fields added later. A method no test received an answer from fails too: its
schema would be unchecked.
"""
import copy
import json
import sys

from jsonschema import Draft7Validator, FormatChecker


def inlined(schema, types):
    """The schema with each `#/components/schemas/NAME` reference replaced by that type."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if ref is not None:
            prefix = "#/components/schemas/"
            if not ref.startswith(prefix) or ref[len(prefix):] not in types:
                raise KeyError(f"unknown type {ref}")
            return inlined(types[ref[len(prefix):]], types)
        return {key: inlined(value, types) for key, value in schema.items()}
    if isinstance(schema, list):
        return [inlined(value, types) for value in schema]
    return schema


def closed(schema):
    """The schema with every object that lists its properties closed to others."""
    schema = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return schema


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    answers_path = sys.argv[1]
    openrpc_path = sys.argv[2] if len(sys.argv) > 2 else "docs/openrpc.json"
    with open(openrpc_path, encoding="utf-8") as f:
        document = json.load(f)
    validators, problems = {}, []
    types = document.get("components", {}).get("schemas", {})
    for name, schema in sorted(types.items()):
        try:
            Draft7Validator.check_schema(schema)
        except Exception as error:
            problems.append(f"type {name} is not valid JSON Schema: {error}")
    for method in document["methods"]:
        name = method["name"]
        try:
            schema = inlined(method["result"]["schema"], types)
            Draft7Validator.check_schema(schema)
        except Exception as error:  # the schema itself is broken
            problems.append(f"{name}: its result schema is not valid JSON Schema: {error}")
            continue
        validators[name] = Draft7Validator(closed(schema), format_checker=FormatChecker())
    counts, failures = {name: 0 for name in validators}, {}
    with open(answers_path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            answer = json.loads(line)
            name = answer["method"]
            if name not in validators:
                problems.append(f"line {number}: {name} is not a method of the document")
                continue
            counts[name] += 1
            errors = sorted(validators[name].iter_errors(answer["result"]), key=lambda e: list(e.absolute_path))
            for error in errors[:3]:
                where = "/".join(str(p) for p in error.absolute_path) or "(result)"
                failures.setdefault(name, []).append(f"line {number}: {where}: {error.message[:300]}")
    for name in sorted(counts):
        status = "ok" if counts[name] and name not in failures else ("FAIL" if name in failures else "NO ANSWER")
        print(f"{name:28} {counts[name]:6} {status}")
    for name, messages in sorted(failures.items()):
        problems.append(f"{name}: {len(messages)} problems, first: " + "; ".join(messages[:5]))
    problems += [f"{name}: no test received an answer" for name, count in sorted(counts.items()) if count == 0]
    total = sum(counts.values())
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(f"{len(problems)} problems in {total} answers of {len(counts)} methods")
    print(f"{total} answers of {len(counts)} methods match their result schemas")


if __name__ == "__main__":
    main()
