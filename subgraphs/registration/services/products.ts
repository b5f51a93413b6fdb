import type { EntityManager } from '@mikro-orm/core';
import { badInput, conflict, notFound } from '../../platform/errors.ts';
import { ProductRegistration } from '../entities.ts';
import { findProduct, PRODUCTS, type ProductDefinition } from '../products.ts';
import { checkId, checkObject } from './common.ts';
import { ConsentService } from './consents.ts';
import { inTransaction } from './devices.ts';
import { RegisteredUserService } from './users.ts';
import { RegisteredVehicleService } from './vehicles.ts';

function product(name: unknown, field: string, subject: 'user' | 'vehicle'): ProductDefinition {
  const found = typeof name === 'string' ? findProduct(name) : undefined;
  if (!found) throw badInput(`Unknown product ${JSON.stringify(name)}; known products: ${PRODUCTS.map((p) => p.name).join(', ')}`, field);
  if (!found.subjects.includes(subject)) throw badInput(`Product '${found.name}' cannot be registered for a ${subject}`, field);
  return found;
}

const reRegistration = (name: string, who: string) =>
  conflict(`${who} was un-enrolled from '${name}'; re-registering a product after un-enrolment is not allowed`, { productName: name });

export class ProductRegistrationService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  /** Refuses (409) a product whose required consents the user has not currently granted, naming them. */
  private async assertConsents(userId: string | null, definition: ProductDefinition, who: string) {
    if (!definition.requiredConsents.length) return;
    if (!userId) {
      throw conflict(`Product '${definition.name}' needs the consent(s) ${definition.requiredConsents.join(', ')} of the vehicle's user, and ${who} has no user`,
        { productName: definition.name, missingConsents: [...definition.requiredConsents] });
    }
    const missing = await new ConsentService(this.em).missing(userId, definition.requiredConsents);
    if (missing.length) {
      throw conflict(`Product '${definition.name}' needs the consent(s) ${missing.join(', ')}, which user '${userId}' has not currently granted`,
        { productName: definition.name, missingConsents: missing, userId });
    }
  }

  /** Registers a user for several products, all or nothing. Already enrolled products stay as they are. */
  registerUser(userIdIn: unknown, names: unknown, parameters: unknown): Promise<ProductRegistration[]> {
    const userId = checkId(userIdIn, 'userId');
    if (!Array.isArray(names) || names.length === 0) throw badInput('products must be a non-empty list of product names', 'products');
    const definitions = [...new Map(names.map((n, i) => product(n, `products.${i}`, 'user')).map((d) => [d.name, d])).values()];
    const additionalParameters = checkObject(parameters, 'additionalParameters');
    return inTransaction(this.em, async (tx) => {
      await new RegisteredUserService(tx).requireActive(userId, 'new products');
      const svc = new ProductRegistrationService(tx);
      const existing = await tx.find(ProductRegistration, { userId, productName: { $in: definitions.map((d) => d.name) } });
      const result: ProductRegistration[] = [];
      for (const definition of definitions) {
        const row = existing.find((r) => r.productName === definition.name);
        if (row?.status === 'unenrolled') throw reRegistration(definition.name, `User '${userId}'`);
        if (row) { result.push(row); continue; }
        await svc.assertConsents(userId, definition, `user '${userId}'`);
        result.push(tx.create(ProductRegistration, { userId, vehicleId: null, productName: definition.name, status: 'enrolled', additionalParameters, unenrolledAt: null } as never));
      }
      await tx.flush();
      return result;
    }, 'The product registration changed concurrently; retry');
  }

  async registerUserOne(userId: unknown, name: unknown, parameters: unknown): Promise<ProductRegistration> {
    checkId(userId, 'userId');
    const definition = product(name, 'productName', 'user');
    const [row] = await this.registerUser(userId, [definition.name], parameters);
    return row!;
  }

  /** Un-enrols a user from a product (idempotent); the row stays, so re-registration is refused. */
  async unenrollUser(userIdIn: unknown, name: unknown): Promise<ProductRegistration> {
    const userId = checkId(userIdIn, 'userId');
    const definition = product(name, 'productName', 'user');
    await new RegisteredUserService(this.em).get(userId);
    const row = await this.em.findOne(ProductRegistration, { userId, productName: definition.name });
    if (!row) throw notFound('ProductRegistration', `${userId}/${definition.name}`);
    if (row.status === 'enrolled') {
      row.status = 'unenrolled';
      row.unenrolledAt = new Date();
      await this.em.flush();
    }
    return row;
  }

  /** Registers a vehicle for a product; consents are those of the vehicle's user. */
  registerVehicle(vehicleIdIn: unknown, name: unknown, parameters: unknown): Promise<ProductRegistration> {
    const vehicleId = checkId(vehicleIdIn, 'vehicleId');
    const definition = product(name, 'productName', 'vehicle');
    const additionalParameters = checkObject(parameters, 'additionalParameters');
    return inTransaction(this.em, async (tx) => {
      const vehicle = await new RegisteredVehicleService(tx).get(vehicleId);
      if (vehicle.userId) await new RegisteredUserService(tx).requireActive(vehicle.userId, 'new products');
      const row = await tx.findOne(ProductRegistration, { vehicleId, productName: definition.name });
      if (row?.status === 'unenrolled') throw reRegistration(definition.name, `Vehicle '${vehicleId}'`);
      if (row) return row;
      await new ProductRegistrationService(tx).assertConsents(vehicle.userId ?? null, definition, `vehicle '${vehicleId}'`);
      const created = tx.create(ProductRegistration, { userId: null, vehicleId, productName: definition.name, status: 'enrolled', additionalParameters, unenrolledAt: null } as never);
      await tx.flush();
      return created;
    }, 'The product registration changed concurrently; retry');
  }
}
