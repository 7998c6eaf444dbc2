package n8n

// RouteOf exposes routeOf to the external tests.
var RouteOf = routeOf
