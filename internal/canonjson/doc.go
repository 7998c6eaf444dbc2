// Package canonjson rewrites one JSON value in a canonical form, so that two
// documents that mean the same thing compare equal byte for byte.
//
// The canonical form has object keys sorted by the bytes of their UTF-8
// text (the order encoding/json gives map keys), numbers kept exactly as
// written, no insignificant white space, strings written as encoding/json
// writes them without HTML escaping ('<', '>' and '&' stay as they are).
// Canonicalize(Canonicalize(x)) equals Canonicalize(x).
//
// The input is read strictly, because a lenient reading would let two
// different documents canonicalise to the same bytes (or one document to
// bytes that mean something else):
//
//   - exactly one JSON value: data after it, including a stray '}' or ']',
//     is refused;
//   - a key repeated in one object is refused (readers disagree on which
//     copy wins);
//   - a \u escape of a lone UTF-16 surrogate (\ud800 … \udfff not in a valid
//     pair) is refused; a valid escape such as \ufffd is accepted in either
//     hex case;
//   - bytes that are not UTF-8 and raw control characters in strings are
//     refused;
//   - nesting deeper than MaxDepth is refused.
//
// # Failure taxonomy
//
// Every failure is a *Error with the byte Offset in the input where the
// problem was found and a Reason; there are no sentinels.
package canonjson
