// strapd-web: strapd in a browser and for Prometheus, a StrapKit client (docs/web.md).
import StrapWeb

WebMain.run(arguments: Array(CommandLine.arguments.dropFirst()))
