package org.keyroute;

import com.sun.jna.Callback;

/**
 * The C ABI of libkeyroute ({@code bindings-c/include/keyroute.h}), bound by JNA direct
 * mapping: every function is a {@code static native} method, registered once when this
 * class loads ({@link NativeLibraryLoader}). Types, on the 64-bit platforms the jar supports:
 * pointers, handles and {@code size_t} are {@code long}; an out-pointer to one value is a
 * one-element array; a {@code const char *} argument is a NUL-terminated {@code byte[]}
 * ({@link Text#cstr}); a struct passed by pointer is a {@code long[]} or {@code byte[]} of
 * its size, laid out as the header says. Primitive arrays are copied in and back by JNA, so
 * a batch crosses once.
 */
final class Lib {
    static {
        NativeLibraryLoader.register(Lib.class);
        NativeLibraryLoader.checkVersion(Text.cstring(keyroute_version()));
    }

    private Lib() {}

    /** {@code keyroute_loader}: runs in the thread that called get_or_load (or, for warm,
     *  in a thread of keyroute's: JNA attaches it). */
    interface Loader extends Callback {
        int invoke(long ctx, long client, long kind, long load);
    }

    // -- the library and its statuses
    static native long keyroute_status_name(int status);
    static native long keyroute_last_error_message();
    static native long keyroute_version();

    // -- slots
    static native short keyroute_key_slot(byte[] key, long len);
    static native int keyroute_key_slots_packed(byte[] data, long dataLen, int[] ends, long count,
                                                short[] slotsOut);
    static native int keyroute_hash_tag(byte[] key, long len, long[] offsetOut, long[] lenOut);
    static native int keyroute_slot_map_new(long[] out);
    static native int keyroute_slot_map_free(long map);
    static native int keyroute_slot_map_add_master(long map, byte[] id, byte[] host, long port,
                                                   long[] indexOut);
    static native int keyroute_slot_map_add_replica(long map, long master, byte[] id, byte[] host,
                                                    long port, long[] indexOut);
    static native int keyroute_slot_map_assign(long map, short first, short last, long node);
    static native int keyroute_slot_map_unassign(long map, short first, short last);
    static native int keyroute_slot_map_owner(long map, short slot, long[] indexOut);
    static native int keyroute_slot_map_owner_of_key(long map, byte[] key, long len, long[] indexOut,
                                                     short[] slotOut);
    static native int keyroute_slot_map_node(long map, long index, long[] idOut, long[] hostOut,
                                             short[] portOut, int[] isMasterOut, long[] masterOut);
    static native long keyroute_slot_map_len(long map);
    static native long keyroute_slot_map_slot_count(long map, long node);
    static native int keyroute_slot_map_is_complete(long map);
    /** {@code out}: a {@code keyroute_redirect} (40 bytes; {@link Redirect#decode}). */
    static native int keyroute_redirect_parse(long message, long len, long currentHost, long out);
    static native int keyroute_slot_map_apply_redirect(long map, long message, long len,
                                                       long currentHost, long out);

    // -- rings
    /** {@code options}: a {@code keyroute_ring_options}, {vnodes, points_per_digest,
     *  default_port}. */
    static native int keyroute_ring_new(byte[] profile, long[] options, long[] out);
    static native int keyroute_ring_from_spec(byte[] profile, long[] options, byte[] spec,
                                              long[] out);
    static native int keyroute_ring_free(long ring);
    static native int keyroute_ring_add(long ring, byte[] name, long weight);
    static native int keyroute_ring_remove(long ring, byte[] name);
    static native int keyroute_ring_set_weight(long ring, byte[] name, long weight);
    static native int keyroute_ring_get_index(long ring, byte[] key, long len, long[] indexOut);
    static native int keyroute_ring_get_many_packed(long ring, byte[] data, long dataLen, int[] ends,
                                                    long count, int[] indexesOut);
    static native int keyroute_ring_get_n(long ring, byte[] key, long len, long n, long[] nodesOut,
                                          long[] lensOut, long[] countOut);
    static native long keyroute_ring_len(long ring);
    static native long keyroute_ring_point_count(long ring);
    static native long keyroute_ring_profile(long ring);
    static native int keyroute_ring_node(long ring, long index, long[] nameOut, long[] nameLenOut,
                                         int[] weightOut);
    static native int keyroute_ring_shares(long ring, double[] sharesOut, long cap, long[] countOut);
    static native int keyroute_ring_diff(long oldRing, long newRing, long[] out);
    static native int keyroute_diff_free(long diff);
    static native double keyroute_diff_moved_fraction(long diff);
    static native double keyroute_diff_ideal_fraction(long diff);
    static native long keyroute_diff_len(long diff);
    static native int keyroute_diff_arc(long diff, long index, long[] startOut, long[] endOut,
                                        long[] fromOut, long[] toOut);

    // -- engines
    static native int keyroute_router_new(byte[] engine, long names, long[] weights, long count,
                                          long optionNames, long optionValues, long optionCount,
                                          long[] out);
    /** {@code options}: a {@code keyroute_config_options} in native memory, or 0. */
    static native int keyroute_router_from_config(byte[] text, long len, byte[] pool, long options,
                                                  long[] out);
    static native int keyroute_router_add(long router, byte[] name, long weight);
    static native int keyroute_router_remove(long router, byte[] name);
    static native int keyroute_router_free(long router);
    static native int keyroute_router_get_index(long router, byte[] key, long len, long[] indexOut);
    static native int keyroute_router_get_many_packed(long router, byte[] data, long dataLen,
                                                      int[] ends, long count, int[] indexesOut);
    static native int keyroute_router_get_n(long router, byte[] key, long len, long n,
                                            long[] indexesOut, long[] countOut);
    static native long keyroute_router_len(long router);
    static native int keyroute_router_node(long router, long index, long[] nameOut, long[] nameLenOut,
                                           int[] weightOut);
    static native long keyroute_router_engine(long router);
    static native long keyroute_router_format(long router);
    static native long keyroute_router_config_key(long router);
    static native long keyroute_router_node_address(long router, long index);
    static native int keyroute_bounded_new(long router, double c, long[] out);
    static native int keyroute_bounded_free(long bounded);
    static native int keyroute_bounded_assign(long bounded, byte[] key, long len, long[] indexOut);
    static native int keyroute_bounded_release(long bounded, byte[] key, long len, long[] movedOut);
    static native int keyroute_bounded_moved(long bounded, long i, long[] keyOut, long[] keyLenOut,
                                             long[] fromOut, long[] toOut);
    static native int keyroute_bounded_node(long bounded, long index, long[] nameOut, long[] loadOut);
    static native long keyroute_bounded_cap(long bounded);
    static native long keyroute_bounded_assigned(long bounded);

    // -- plans
    static native int keyroute_plan_new(long map, long[] nodes, long[] weights, long count,
                                        long[] out);
    static native int keyroute_plan_from_spec(long map, byte[] weights, long[] out);
    static native int keyroute_plan_free(long plan);
    static native long keyroute_plan_len(long plan);
    static native long keyroute_plan_slots_moved(long plan);
    static native int keyroute_plan_move(long plan, long index, short[] firstOut, short[] lastOut,
                                         long[] fromOut, long[] toOut);
    static native long keyroute_plan_target_count(long plan);
    static native int keyroute_plan_target(long plan, long index, long[] nodeOut, long[] weightOut,
                                           double[] idealOut, long[] beforeOut, long[] afterOut);
    static native int keyroute_plan_apply(long plan, long map);

    // -- the in-memory pool
    static native int keyroute_pool_new(long[] out);
    static native int keyroute_pool_free(long pool);
    static native int keyroute_pool_seed(long pool, long members, long lens, long count, long initial,
                                         int overwrite, long[] addedOut);
    static native int keyroute_pool_pick(long pool, long[] memberOut, long[] lenOut);
    static native int keyroute_pool_pick_many(long pool, long n, long membersOut, long lensOut,
                                              long[] countOut);
    static native int keyroute_pool_remove(long pool, byte[] member, long len, long[] countOut);
    static native int keyroute_pool_restore(long pool, byte[] member, long len, int mode,
                                            long[] countOut);
    static native int keyroute_pool_count(long pool, byte[] member, long len, long[] countOut);
    static native int keyroute_pool_removed_count(long pool, byte[] member, long len, long[] countOut);
    static native long keyroute_pool_len(long pool);
    static native int keyroute_side_key(byte[] poolKey, long keyLen, byte[] buf, long cap,
                                        long[] lenOut);

    // -- least-used pools, leases and affinity on Redis
    static native int keyroute_least_used_open(byte[] url, byte[] poolKey, long keyLen, int timeoutMs,
                                               long[] out);
    static native int keyroute_least_used_open_cluster(long seeds, long count, byte[] poolKey,
                                                       long keyLen, int timeoutMs, long[] out);
    static native int keyroute_least_used_free(long lu);
    static native int keyroute_least_used_seed(long lu, long members, long lens, long count,
                                               long initial, int overwrite, long[] addedOut);
    static native int keyroute_least_used_pick(long lu, byte[] buf, long cap, long[] lenOut);
    static native int keyroute_least_used_remove(long lu, byte[] member, long len, long[] countOut);
    static native int keyroute_least_used_restore(long lu, byte[] member, long len, int mode,
                                                  long[] countOut);
    static native int keyroute_least_used_count(long lu, byte[] member, long len, long[] countOut);
    static native int keyroute_leases_open(byte[] url, byte[] poolKey, long keyLen, int timeoutMs,
                                           long[] out);
    static native int keyroute_leases_open_cluster(long seeds, long count, byte[] poolKey,
                                                   long keyLen, int timeoutMs, long[] out);
    static native int keyroute_leases_free(long leases);
    static native int keyroute_leases_seed(long leases, long members, long lens, long count,
                                           long[] addedOut);
    static native int keyroute_leases_remove(long leases, byte[] member, long len);
    static native int keyroute_leases_acquire(long leases, long ttlMs, byte[] buf, long cap,
                                              long[] lenOut, long[] leaseIdOut, long[] deadlineOut);
    static native int keyroute_leases_release(long leases, long leaseId, int[] resultOut);
    static native int keyroute_leases_reclaim(long leases, long[] countOut);
    static native int keyroute_affinity_open(byte[] url, byte[] key, long keyLen, int timeoutMs,
                                             long[] out);
    static native int keyroute_affinity_open_cluster(long seeds, long count, byte[] key, long keyLen,
                                                     int timeoutMs, long[] out);
    static native int keyroute_affinity_free(long affinity);
    static native int keyroute_affinity_take(long affinity, byte[] item, long itemLen,
                                             long candidates, long lens, long count, long cap,
                                             double c, long[] indexOut, long[] loadOut,
                                             long[] capOut, byte[] newOut);
    static native int keyroute_affinity_release(long affinity, byte[] item, long itemLen,
                                                byte[] releasedOut);
    static native int keyroute_affinity_holder(long affinity, byte[] item, long itemLen, byte[] buf,
                                               long cap, long[] lenOut);

    // -- the smart cache, sessions and devices
    static native int keyroute_value_free(long value);
    /** {@code options}: a {@code keyroute_cache_options} as 7 longs ({@link SmartCache.Options}). */
    static native int keyroute_cache_options_default(long[] options);
    static native int keyroute_cache_open(byte[] url, long[] options, long[] out);
    static native int keyroute_cache_open_cluster(long seeds, long count, long[] options, long[] out);
    static native int keyroute_cache_free(long cache);
    static native int keyroute_load_write(long load, byte[] data, long len);
    static native int keyroute_load_fail(long load, byte[] code, byte[] message);
    static native int keyroute_cache_get_or_load(long cache, byte[] client, byte[] kind, long timeoutMs,
                                                 Loader loader, long ctx, long[] valueOut,
                                                 long[] lenOut);
    static native int keyroute_cache_invalidate(long cache, byte[] client, byte[] kind,
                                                int[] existedOut);
    static native int keyroute_cache_warm(long cache, byte[] device, long kinds, long count,
                                          Loader loader, long ctx, int[] outcomes);
    /** {@code out}: a {@code keyroute_cache_counters}, 10 counters. */
    static native int keyroute_cache_stats(long cache, long[] out);
    /** {@code options}: a {@code keyroute_session_options} as 4 longs. */
    static native int keyroute_session_options_default(long[] options);
    static native int keyroute_sessions_open(byte[] url, long[] options, long[] out);
    static native int keyroute_sessions_open_cluster(long seeds, long count, long[] options,
                                                     long[] out);
    static native int keyroute_sessions_free(long sessions);
    static native int keyroute_sessions_create(long sessions, byte[] client, byte[] version,
                                               byte[] data, long dataLen, byte[] sidOut, long sidCap,
                                               long[] expiresOut);
    /** {@code info}: a {@code keyroute_session_info} as 7 longs. */
    static native int keyroute_session_info_clear(long[] info);
    static native int keyroute_sessions_touch(long sessions, byte[] sid, byte[] version, long[] info);
    static native int keyroute_sessions_destroy(long sessions, byte[] sid, int[] wasLiveOut);
    /** {@code entries}: {@code keyroute_session_entry}s, 64 bytes each. */
    static native int keyroute_sessions_list(long sessions, byte[] client, byte[] entries, long cap,
                                             long[] countOut);
    static native int keyroute_devices_open(byte[] url, int timeoutMs, long[] out);
    static native int keyroute_devices_open_cluster(long seeds, long count, int timeoutMs, long[] out);
    static native int keyroute_devices_free(long devices);
    static native int keyroute_devices_bind(long devices, byte[] device, byte[] client, long ttlMs);
    static native int keyroute_devices_client_of(long devices, byte[] device, long[] clientOut,
                                                 long[] lenOut);

    // -- scripts
    static native long keyroute_script_count();
    /** {@code out}: a {@code keyroute_script_info} as 6 longs. */
    static native int keyroute_script_at(long index, long[] out);
    static native int keyroute_script(byte[] name, long[] out);
}
