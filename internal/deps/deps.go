//go:build candordeps

// Package deps pins the module's dependencies while the packages that use
// them are being written, so that go mod tidy keeps them. It is never built.
package deps

import (
	_ "github.com/a2aproject/a2a-go/v2/a2a"
	_ "github.com/a2aproject/a2a-go/v2/a2aclient"
	_ "github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	_ "github.com/a2aproject/a2a-go/v2/a2asrv"
	_ "github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	_ "github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/mark3labs/mcp-go/client"
	_ "github.com/mark3labs/mcp-go/client/transport"
	_ "github.com/mark3labs/mcp-go/mcp"
	_ "github.com/mark3labs/mcp-go/server"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/zitadel/oidc/v3/pkg/client/rp"
	_ "github.com/zitadel/oidc/v3/pkg/oidc"
	_ "github.com/zitadel/oidc/v3/pkg/op"
	_ "golang.org/x/oauth2"
	_ "golang.org/x/oauth2/clientcredentials"
	_ "golang.org/x/sys/cpu"
	_ "modernc.org/sqlite"
)
