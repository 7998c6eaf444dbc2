package tokenexchange_test

import "runtime"

func runtimeGosched() { runtime.Gosched() }
