import CohorlyCrash
print("CrashDemo")
