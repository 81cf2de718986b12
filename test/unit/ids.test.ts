import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isUlid, newId } from '../../service/core/ids';

test('ids are ULIDs that sort in creation order, also within one millisecond', () => {
  const ids = Array.from({ length: 10_000 }, () => newId());
  for (const id of ids) assert.ok(isUlid(id), id);
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
});

test('isUlid accepts only the canonical 26-character form', () => {
  assert.equal(isUlid('01ARZ3NDEKTSV4RRFFQ69G5FAV'), true);
  for (const bad of ['', '01arz3ndektsv4rrffq69g5fav', '01ARZ3NDEKTSV4RRFFQ69G5FA', '01ARZ3NDEKTSV4RRFFQ69G5FAVX', '01ARZ3NDEKTSV4RRFFQ69G5FAI', '81ARZ3NDEKTSV4RRFFQ69G5FAV']) {
    assert.equal(isUlid(bad), false, bad);
  }
});
