package demo_test

import (
	"context"
	"fmt"

	"github.com/candorkit/candor/examples/internal/demo"
)

func Example() {
	ctx := context.Background()
	w, err := demo.Start(ctx, "example-agent", demo.WithFrontEnd("example-web", 0), demo.WithCallLog())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()

	// The agent exchanges the user's front-end token for the catalog's
	// audience; only that token gets through the catalog's bearer check.
	userTok, err := w.UserToken(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	tok, err := w.AgentConfig().Exchange(ctx, userTok)
	if err != nil {
		fmt.Println(err)
		return
	}
	claims, err := w.OP.VerifyAccessToken(ctx, tok.AccessToken, demo.Audience)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("catalog token for", claims.Subject, "issued to", claims.AuthorizedParty, "audience", claims.Audience)
	fmt.Println(w.Catalog.Len(), "products; catalog requests so far:", len(w.Calls()))
	// Output:
	// catalog token for marie issued to example-agent audience [catalog-mcp]
	// 110 products; catalog requests so far: 0
}
