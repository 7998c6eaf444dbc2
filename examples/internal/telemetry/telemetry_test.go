package telemetry_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"

	"github.com/candorkit/candor/examples/internal/telemetry"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestSetupNothingSet(t *testing.T) {
	tel, err := telemetry.Setup(context.Background(), "prog", env(nil))
	require.NoError(t, err)
	assert.False(t, tel.Enabled)
	assert.Equal(t, "prog", tel.Service)
	assert.NoError(t, tel.Shutdown(context.Background()))

	tel, err = telemetry.Setup(context.Background(), "prog", env(map[string]string{
		telemetry.EnvEndpoint: "http://127.0.0.1:4318", telemetry.EnvSDKDisabled: "true"}))
	require.NoError(t, err)
	assert.False(t, tel.Enabled, "OTEL_SDK_DISABLED wins")
}

func TestSetupBadEndpoint(t *testing.T) {
	for _, name := range []string{telemetry.EnvEndpoint, telemetry.EnvTracesEndpoint, telemetry.EnvMetricsEndpoint} {
		_, err := telemetry.Setup(context.Background(), "prog", env(map[string]string{name: "collector:4318/secret-token"}))
		var ce *telemetry.ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, name, ce.Variable)
		assert.NotContains(t, err.Error(), "secret-token", "the value is never repeated")
	}
}

// TestSetupExports checks that with OTEL_EXPORTER_OTLP_ENDPOINT set a span
// and a metric of the global providers reach the collector, under
// OTEL_SERVICE_NAME.
func TestSetupExports(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]byte{}
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.URL.Path] = append(got[r.URL.Path], b...)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(collector.Close)

	ctx := context.Background()
	tel, err := telemetry.Setup(ctx, "prog", env(map[string]string{
		telemetry.EnvEndpoint: collector.URL, telemetry.EnvServiceName: "availability-test"}))
	require.NoError(t, err)
	require.True(t, tel.Enabled)
	assert.Equal(t, "availability-test", tel.Service)
	_, span := otel.Tracer("test").Start(ctx, "exported-span")
	span.End()
	counter, err := otel.Meter("test").Int64Counter("exported.counter")
	require.NoError(t, err)
	counter.Add(ctx, 1)
	require.NoError(t, tel.Shutdown(ctx)) // flushes

	mu.Lock()
	defer mu.Unlock()
	assert.True(t, bytes.Contains(got["/v1/traces"], []byte("exported-span")), "the span reached /v1/traces")
	assert.True(t, bytes.Contains(got["/v1/traces"], []byte("availability-test")), "under the service name")
	assert.True(t, bytes.Contains(got["/v1/metrics"], []byte("exported.counter")), "the metric reached /v1/metrics")
}

func ExampleSetup() {
	// In a binary: telemetry.Setup(ctx, "my-agent", os.LookupEnv), and
	// defer tel.Shutdown. Without OTEL_EXPORTER_OTLP_ENDPOINT nothing is
	// exported.
	tel, err := telemetry.Setup(context.Background(), "my-agent", func(string) (string, bool) { return "", false })
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tel.Shutdown(context.Background())
	fmt.Println(tel.Enabled, tel.Service)
	// Output: false my-agent
}

func ExampleConfigError() {
	_, err := telemetry.Setup(context.Background(), "my-agent", func(k string) (string, bool) {
		return "not a URL", k == telemetry.EnvEndpoint
	})
	fmt.Println(err)
	fmt.Print(telemetry.Usage[:11])
	// Output:
	// OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute http or https URL
	// OpenTelemet
}
