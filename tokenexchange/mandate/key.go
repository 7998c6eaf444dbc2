package mandate

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/candorkit/candor/tokenexchange"
)

// KeySize is the mandate key size: AES-256.
const KeySize = 32

// ParseKey decodes a KeySize-byte key written as standard or URL-safe base64
// (padded or not) or as hex, as it would come from an environment variable.
// Its error never quotes the input.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	if b, err := hex.DecodeString(s); err == nil && len(b) == KeySize {
		return b, nil
	}
	return nil, fmt.Errorf("%w: mandate key must be %d bytes in base64 or hex", tokenexchange.ErrConfig, KeySize)
}
