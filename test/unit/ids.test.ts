import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeTime, encodeTime } from 'ulid';
import { isUlid, newId, newIdAfter } from '../../service/core/ids';

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

describe('newIdAfter: a new id greater than the last one, whatever the clock says', () => {
  const Z = 'Z'.repeat(16);
  test('no last id, or one in the past: a fresh id', () => {
    for (const last of [null, '00000000000000000000000000', newId()]) {
      const id = newIdAfter(last);
      assert.ok(isUlid(id), id);
      if (last !== null) assert.ok(id > last, `${id} > ${last}`);
      assert.ok(Math.abs(decodeTime(id) - Date.now()) < 60_000, 'at about now');
    }
  });
  test('a last id in the future (the clock stepped back): the id right after it, same instant', () => {
    const time = encodeTime(Date.now() + 3_600_000, 10);
    const rows: [string, string][] = [
      [`${time}0000000000000000`, `${time}0000000000000001`],
      [`${time}000000000000000Y`, `${time}000000000000000Z`],
      // The carry runs across digits of the random part.
      [`${time}000000000000000Z`, `${time}0000000000000010`],
      [`${time}0000000000000ZZZ`, `${time}0000000000001000`],
      [`${time}ABCDEFGHJKMNPQRZ`, `${time}ABCDEFGHJKMNPQS0`],
      [`${time}Y${'Z'.repeat(15)}`, `${time}Z${'0'.repeat(15)}`],
    ];
    for (const [last, next] of rows) {
      assert.equal(newIdAfter(last), next);
      assert.ok(next > last);
      assert.ok(isUlid(next));
    }
  });
  test('a chain of ids after a future one keeps increasing, and never leaves its instant', () => {
    let last = `${encodeTime(Date.now() + 3_600_000, 10)}${'0'.repeat(13)}ZZX`;
    for (let n = 0; n < 100; n++) {
      const id = newIdAfter(last);
      assert.ok(id > last, `${id} > ${last}`);
      assert.equal(id.slice(0, 10), last.slice(0, 10));
      last = id;
    }
  });
  test('the random part exhausted within one millisecond is an error, not a smaller id', () => {
    assert.throws(() => newIdAfter(`${encodeTime(Date.now() + 3_600_000, 10)}${Z}`), /exhausted/);
  });
});
