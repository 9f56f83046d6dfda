// A kept head finished for one location's header rules (respond.ts's KeptHead), and the forms it
// goes out in, each built once: its HTTP/2 head object, and its HTTP/1.1 fields as Node's store.
import { currentDate, headerObject, type HeaderObject } from './http2-head.js';
import { fieldStore, type FieldStore } from './node-internals.js';
import { hasHeader } from './header-list.js';

export class FinishedHead {
  private object: HeaderObject | undefined;
  private readonly datedHere: boolean;
  private store: FieldStore | undefined | null = null;

  constructor(
    readonly list: readonly string[],
    private readonly status: number,
  ) {
    this.datedHere = !hasHeader(list, 'date');
  }

  /**
   * The HTTP/2 head, its `date` brought up to date each time unless the header rules set one:
   * node:http2 copies the object before respond() returns, so one object serves every response.
   */
  get headerObject(): HeaderObject {
    const object = (this.object ??= headerObject(this.list, this.status));
    if (this.datedHere) object.date = currentDate();
    return object;
  }

  /** Undefined when Node's store is not used or a field is invalid: writeHead checks the list. */
  get fieldStore(): FieldStore | undefined {
    if (this.store === null) this.store = fieldStore(this.list);
    return this.store;
  }
}
