package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
)

// The embedded demo without the header (its ports change on every run): the
// catalog, the OpenID provider and the agent on 127.0.0.1, the three
// questions asked through an A2A 1.0 client as the demo user.
func Example() {
	ctx := context.Background()
	st, err := start(ctx, &options{listen: "127.0.0.1:0"}, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	answers, err := askAgent(ctx, st.agent.Base, st.userToken, demoQuestions())
	if err != nil {
		fmt.Println(err)
		return
	}
	printAnswers(os.Stdout, answers)
	// Output:
	// > Peut-on promettre S10_1949 ?
	//   completed: Yes — 1952 Alpine Renault 1300 (S10_1949) can be promised: 7305 in stock, above the reorder threshold of 50.
	//
	// > Peut-on promettre la Vespa ?
	//   failed (escalated): No product reference in the question: name the catalog code (for instance S10_1949); the agent does not guess a product from its name.
	//
	// > Peut-on promettre S99_NOPE ?
	//   failed (escalated): There is no product S99_NOPE in the catalog.
}
