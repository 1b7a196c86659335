// The exporters a server runs, from its configuration.
import type { Config } from '../../config/index.js';
import type { Logger } from '../../logging.js';
import type { TraceExporter } from './exporter.js';
import { LangSmithForwarder } from './langsmith.js';
import { OtlpRunExporter } from './otlp.js';

/** Exporters enabled by `config` (none unless an endpoint is set). */
export function createTraceExporters(config: Config, logger: Logger): TraceExporter[] {
  const exporters: TraceExporter[] = [];
  if (config.otlpTracesEndpoint) {
    exporters.push(new OtlpRunExporter({ url: config.otlpTracesEndpoint, headers: parseHeaders(config.otlpHeaders), maxQueue: config.traceExportQueue, logger }));
  }
  if (config.langsmithExportUrl) {
    exporters.push(new LangSmithForwarder({ url: config.langsmithExportUrl, apiKey: config.langsmithExportApiKey, maxQueue: config.traceExportQueue, logger }));
  }
  return exporters;
}

function parseHeaders(text: string | undefined): Record<string, string> {
  if (!text) return {};
  return Object.fromEntries(
    text.split(',').map((pair) => {
      const eq = pair.indexOf('=');
      return [pair.slice(0, eq).trim(), decodeURIComponent(pair.slice(eq + 1).trim())];
    }),
  );
}
