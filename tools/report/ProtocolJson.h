//===- ProtocolJson.h - the protocol IR as versioned JSON -------------------------===//
//
// `wsv protocol --format json` writes one document per file:
//   {"schema": "wsv-protocol/1", "file": ..., "kernels": [<protocol>, ...]}
// PROTOCOL_JSON.md next to this file documents every field. Values carry both their infix
// text and an expression tree a consumer can evaluate without parsing the text.
//
//===----------------------------------------------------------------------------------===//
#pragma once

#include "wsv/analyzer/Protocol.h"

#include <nlohmann/json.hpp>

namespace wsv {
namespace report {

constexpr const char *ProtocolJsonSchema = "wsv-protocol/1";

/// One kernel's protocol.
nlohmann::json protocolToJson(const analyzer::Protocol &P);

/// An expression as a tree: numbers for constants, [op, width, operands...] for the rest
/// (leaves: ["param", w, name], ["iter", w, var, loop], ["sreg", w, name], ...).
nlohmann::json exprTree(const analyzer::Protocol &P, const analyzer::Expr *E);

} // namespace report
} // namespace wsv
