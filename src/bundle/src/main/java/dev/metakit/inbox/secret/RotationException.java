package dev.metakit.inbox.secret;

/** A rotation that did not happen, or not wholly; the message says which, and what to do, never a secret. */
public class RotationException extends Exception {
    private final boolean busy;

    public RotationException(String message) {
        this(message, false);
    }

    RotationException(String message, boolean busy) {
        super(message);
        this.busy = busy;
    }

    /** Another instance holds the rotation claim (the ops API answers 409). */
    public boolean busy() {
        return busy;
    }
}
