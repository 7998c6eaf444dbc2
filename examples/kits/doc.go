// Package kits is a module of its own that imports candor's public test
// kits as a user's module would — mcpclient/mcptest, tokenexchange/oidctest,
// a2a/a2atest, n8n/n8ntest and pgtest — and uses each against the package
// it serves. Its tests fail to build if a kit depends on something outside
// the module's public API (an internal package cannot be imported from
// here). Run them with: cd examples/kits && go test ./...
package kits
