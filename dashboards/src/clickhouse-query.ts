/**
 * A panel target for the official ClickHouse datasource plugin (grafana-clickhouse-datasource), which the
 * Foundation SDK has no builder for. Field names and values follow the plugin's src/types/sql.ts
 * (CHSqlQuery: editorType 'sql', queryType 'table' | 'timeSeries' | 'logs' | 'traces', rawSql) plus the
 * `format` number its sqlds backend reads (0 time series, 1 table, 2 logs, 3 traces).
 */
import type { Builder, Dataquery } from '@grafana/grafana-foundation-sdk/cog';

export const CLICKHOUSE_PLUGIN = 'grafana-clickhouse-datasource';
/** Every panel uses the dashboard's `datasource` variable, so one JSON works against any ClickHouse. */
export const DATASOURCE = { type: CLICKHOUSE_PLUGIN, uid: '${datasource}' };

export type QueryType = 'table' | 'timeSeries' | 'logs' | 'traces';
const FORMAT: Record<QueryType, number> = { timeSeries: 0, table: 1, logs: 2, traces: 3 };

export interface ClickHouseQuery extends Dataquery {
  refId: string;
  datasource: typeof DATASOURCE;
  editorType: 'sql';
  queryType: QueryType;
  format: number;
  rawSql: string;
}

export class ClickHouseQueryBuilder implements Builder<Dataquery> {
  private readonly query: ClickHouseQuery;

  constructor(rawSql: string, queryType: QueryType = 'table') {
    this.query = {
      refId: 'A',
      datasource: DATASOURCE,
      editorType: 'sql',
      queryType,
      format: FORMAT[queryType],
      rawSql: rawSql.trim(),
      _implementsDataqueryVariant() {},
    };
  }

  refId(refId: string): this {
    this.query.refId = refId;
    return this;
  }

  build(): ClickHouseQuery {
    return this.query;
  }
}
