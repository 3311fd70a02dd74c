// Package metricname names the library's OpenTelemetry instruments and
// their attributes, for the Service's telemetry and the tests that read
// it. The README's Operations section documents each instrument.
package metricname
