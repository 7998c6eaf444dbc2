// Command broken does not compile; testproc's tests check that Build fails
// the test with the compiler's message.
package main

func main() {
	undefinedOnPurpose()
}
