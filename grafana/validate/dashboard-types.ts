// The shape a committed dashboard must have, built from Grafana's own types (@grafana/schema).
//
// Grafana's generated types use TypeScript string enums, which a JSON literal can never satisfy, so
// `Literalize` turns every enum into the union of its values; everything else (required fields, unknown
// keys, value types) is checked as Grafana declares it. Panel options and custom field config are checked
// against each panel plugin's own types, as partial objects because Grafana fills in omitted defaults.
import type { Dashboard, FieldConfigSource, Panel, RowPanel } from '@grafana/schema';
import type * as Heatmap from '@grafana/schema/dist/esm/raw/composable/heatmap/panelcfg/x/HeatmapPanelCfg_types.gen';
import type * as Stat from '@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen';
import type * as Table from '@grafana/schema/dist/esm/raw/composable/table/panelcfg/x/TablePanelCfg_types.gen';
import type * as TimeSeries from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';

type Literalize<T> = T extends string
  ? `${T}`
  : T extends number | boolean | null | undefined
    ? T
    : T extends ReadonlyArray<infer U>
      ? Array<Literalize<U>>
      : T extends object
        ? { [K in keyof T]: Literalize<T[K]> }
        : T;

type DeepPartial<T> = T extends ReadonlyArray<infer U>
  ? Array<DeepPartial<U>>
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

type Defaults = Literalize<FieldConfigSource['defaults']>;

type PanelOf<TType extends string, TOptions, TCustom> = Omit<Literalize<Panel>, 'type' | 'options' | 'fieldConfig'> & {
  type: TType;
  options?: DeepPartial<Literalize<TOptions>>;
  fieldConfig?: Omit<Literalize<FieldConfigSource>, 'defaults'> & {
    defaults: Omit<Defaults, 'custom'> & { custom?: DeepPartial<Literalize<TCustom>> };
  };
};

export type CheckedPanel =
  | PanelOf<'timeseries', TimeSeries.Options, TimeSeries.FieldConfig>
  | PanelOf<'stat', Stat.Options, Record<string, never>>
  | PanelOf<'heatmap', Heatmap.Options, Heatmap.FieldConfig>
  | PanelOf<'table', Table.Options, Table.FieldConfig>
  | (Omit<Literalize<RowPanel>, 'panels'> & { panels: [] });

export type CheckedDashboard = Omit<Literalize<Dashboard>, 'panels'> & { panels?: CheckedPanel[] };
