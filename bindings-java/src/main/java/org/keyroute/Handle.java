package org.keyroute;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.concurrent.locks.StampedLock;
import java.util.function.LongToIntFunction;

/**
 * A C handle owned by a Java object: freed by {@link #close()}, or, as a safety net, by a
 * {@link Cleaner} once the object is unreachable. Every call runs under a lock: calls that
 * only read the handle share it ({@link #read}), calls that change it or that the C library
 * does not allow at once take it alone ({@link #write}), and {@code close()} takes it alone,
 * so it waits for calls in flight and a call after it throws {@code INVALID_HANDLE} instead
 * of touching freed memory.
 *
 * <p>Kinds whose calls run user code (the smart cache's loaders, which may call the cache
 * again) use a reentrant lock; the others a {@link StampedLock}, the cheaper one.
 */
abstract class Handle implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    /** A call on a live handle's pointer. */
    @FunctionalInterface
    interface Body<T> {
        T run(long ptr);
    }

    /** Frees the pointer once: run by close() or by the cleaner, never both. */
    private static final class Freer implements Runnable {
        private final long ptr;
        private final LongToIntFunction free;

        Freer(long ptr, LongToIntFunction free) {
            this.ptr = ptr;
            this.free = free;
        }

        @Override
        public void run() {
            free.applyAsInt(ptr);
        }
    }

    private final StampedLock stamped;
    private final ReentrantReadWriteLock reentrant;
    private final Cleaner.Cleanable cleanable;
    private final String kind;
    /** The C handle; 0 once closed. Written under the write lock. */
    private long ptr;

    Handle(long ptr, LongToIntFunction free, String kind, boolean reentrant) {
        this.ptr = ptr;
        this.kind = kind;
        this.stamped = reentrant ? null : new StampedLock();
        this.reentrant = reentrant ? new ReentrantReadWriteLock() : null;
        this.cleanable = CLEANER.register(this, new Freer(ptr, free));
    }

    /** Takes the shared lock; the stamp to give back to {@link #exitRead}. */
    final long enterRead() {
        if (reentrant != null) {
            reentrant.readLock().lock();
            return 0;
        }
        return stamped.readLock();
    }

    final void exitRead(long stamp) {
        if (reentrant != null) {
            reentrant.readLock().unlock();
        } else {
            stamped.unlockRead(stamp);
        }
        Reference.reachabilityFence(this);
    }

    final long enterWrite() {
        if (reentrant != null) {
            if (reentrant.getReadHoldCount() > 0) {
                throw new IllegalStateException("a " + kind + " cannot be changed or closed from "
                        + "inside one of its own calls (a loader)");
            }
            reentrant.writeLock().lock();
            return 0;
        }
        return stamped.writeLock();
    }

    final void exitWrite(long stamp) {
        if (reentrant != null) {
            reentrant.writeLock().unlock();
        } else {
            stamped.unlockWrite(stamp);
        }
        Reference.reachabilityFence(this);
    }

    /** The live pointer (call with a lock held). */
    final long live() {
        long p = ptr;
        if (p == 0) {
            throw KeyrouteException.of(ErrorCode.INVALID_HANDLE, "this " + kind + " was closed");
        }
        return p;
    }

    /** Runs {@code body} under the shared lock. */
    final <T> T read(Body<T> body) {
        long s = enterRead();
        try {
            return body.run(live());
        } finally {
            exitRead(s);
        }
    }

    /** Runs {@code body} under the exclusive lock. */
    final <T> T write(Body<T> body) {
        long s = enterWrite();
        try {
            return body.run(live());
        } finally {
            exitWrite(s);
        }
    }

    /** True once closed. */
    public final boolean isClosed() {
        long s = enterRead();
        try {
            return ptr == 0;
        } finally {
            exitRead(s);
        }
    }

    /**
     * Frees the native handle, after any call in flight on another thread has returned.
     * Calls made afterwards throw a {@link KeyrouteException} with code
     * {@code INVALID_HANDLE}. Closing twice does nothing.
     */
    @Override
    public void close() {
        long s = enterWrite();
        try {
            if (ptr != 0) {
                ptr = 0;
                cleanable.clean();
            }
        } finally {
            exitWrite(s);
        }
    }
}
