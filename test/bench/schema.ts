import { readFileSync } from 'node:fs';
import {
  Kind, parse,
  type ConstDirectiveNode, type FieldDefinitionNode, type TypeDefinitionNode, type TypeNode,
} from 'graphql';
import { supergraphPath } from '../../schema/subgraphs.ts';

/**
 * Reads the committed supergraph so scenarios can tell whether the fields they need exist yet and
 * build selections of whatever a subgraph's result types hold today (leaf fields, bounded depth).
 */
export class SupergraphInfo {
  private readonly types = new Map<string, TypeDefinitionNode>();
  /** join__Graph enum value (BOOKING) by subgraph name (booking). */
  private readonly graphs = new Map<string, string>();

  constructor(sdl = readFileSync(supergraphPath, 'utf8')) {
    for (const definition of parse(sdl).definitions) {
      if ('name' in definition && definition.name && definition.kind.endsWith('TypeDefinition')) {
        this.types.set(definition.name.value, definition as TypeDefinitionNode);
      }
    }
    const graphEnum = this.types.get('join__Graph');
    if (graphEnum?.kind === Kind.ENUM_TYPE_DEFINITION) {
      for (const value of graphEnum.values ?? []) {
        const name = value.directives?.find((d) => d.name.value === 'join__graph')?.arguments?.find((a) => a.name.value === 'name')?.value;
        if (name?.kind === Kind.STRING) this.graphs.set(name.value, value.name.value);
      }
    }
  }

  /** The subgraph names composed into the supergraph. */
  get subgraphs(): string[] { return [...this.graphs.keys()]; }

  field(typeName: string, fieldName: string): FieldDefinitionNode | undefined {
    const type = this.types.get(typeName);
    if (!type || (type.kind !== Kind.OBJECT_TYPE_DEFINITION && type.kind !== Kind.INTERFACE_TYPE_DEFINITION)) return undefined;
    return type.fields?.find((f) => f.name.value === fieldName);
  }

  /** "Type.field" names missing from the supergraph. */
  missing(fields: readonly string[]): string[] {
    return fields.filter((path) => { const [type, field] = path.split('.'); return !this.field(type, field); });
  }

  static namedType(type: TypeNode): string {
    return type.kind === Kind.NAMED_TYPE ? type.name.value : SupergraphInfo.namedType(type.type);
  }

  private servedBy(field: FieldDefinitionNode, graph: string | undefined): boolean {
    const directives: readonly ConstDirectiveNode[] = field.directives ?? [];
    if (directives.some((d) => d.name.value === 'inaccessible')) return false;
    const joins = directives.filter((d) => d.name.value === 'join__field');
    if (!graph || joins.length === 0) return true;
    return joins.some((d) => {
      const g = d.arguments?.find((a) => a.name.value === 'graph')?.value;
      const external = d.arguments?.find((a) => a.name.value === 'external')?.value;
      return g?.kind === Kind.ENUM && g.value === graph && !(external?.kind === Kind.BOOLEAN && external.value);
    });
  }

  /**
   * A selection set for `typeName`: every leaf field without required arguments, nested objects to
   * `depth`, unions and interfaces with `__typename` and a fragment per member. Only fields the
   * subgraph `owner` resolves, so the same document also runs against that subgraph directly.
   */
  selection(typeName: string, owner?: string, depth = 3): string {
    const graph = owner ? this.graphs.get(owner) : undefined;
    const type = this.types.get(typeName);
    if (!type) return '__typename';
    if (type.kind === Kind.UNION_TYPE_DEFINITION) {
      return `__typename ${(type.types ?? []).map((t) => `... on ${t.name.value} { ${this.selection(t.name.value, owner, depth)} }`).join(' ')}`;
    }
    if (type.kind !== Kind.OBJECT_TYPE_DEFINITION && type.kind !== Kind.INTERFACE_TYPE_DEFINITION) return '';
    const parts: string[] = [];
    for (const field of type.fields ?? []) {
      if (field.name.value.startsWith('__') || !this.servedBy(field, graph)) continue;
      if ((field.arguments ?? []).some((a) => a.type.kind === Kind.NON_NULL_TYPE && !a.defaultValue)) continue;
      const target = this.types.get(SupergraphInfo.namedType(field.type));
      const leaf = !target || target.kind === Kind.SCALAR_TYPE_DEFINITION || target.kind === Kind.ENUM_TYPE_DEFINITION;
      if (leaf) parts.push(field.name.value);
      else if (depth > 0) parts.push(`${field.name.value} { ${this.selection(target.name.value, owner, depth - 1)} }`);
    }
    return parts.length ? parts.join(' ') : '__typename';
  }
}
