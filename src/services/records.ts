// Records kept by id under one key prefix of the cluster store (apps, dashboard users): the small
// view the services need, JSON-encoded. MemoryRecords serves unit tests.

export interface RecordStore<T> {
  get(id: string): Promise<T | undefined>;
  put(id: string, rec: T): Promise<void>;
  /** False when there was nothing to delete. */
  delete(id: string): Promise<boolean>;
  /** Every record, in id order. */
  list(): Promise<T[]>;
}

export class MemoryRecords<T> implements RecordStore<T> {
  private readonly map = new Map<string, string>();

  async get(id: string): Promise<T | undefined> {
    const v = this.map.get(id);
    return v === undefined ? undefined : (JSON.parse(v) as T);
  }

  async put(id: string, rec: T): Promise<void> {
    this.map.set(id, JSON.stringify(rec));
  }

  async delete(id: string): Promise<boolean> {
    return this.map.delete(id);
  }

  async list(): Promise<T[]> {
    return [...this.map.keys()].sort().map((k) => JSON.parse(this.map.get(k) as string) as T);
  }
}
